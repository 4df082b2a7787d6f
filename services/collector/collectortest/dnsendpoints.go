package collectortest

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
)

// DNSEndpointGVR is the resource of the DNSEndpoint CRD zonestream ships.
var DNSEndpointGVR = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// CRDPoll is how often the crd source of CRDConfig looks for its CRD.
const CRDPoll = 100 * time.Millisecond

// CRDConfig runs the crd source on namespace ns, cluster ns.
func CRDConfig(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"crd"}}
	cfg.CRD.PollInterval = CRDPoll
	return cfg
}

// CRDSubject is the subject of DNSEndpoint ns/name of cluster clusterName.
func CRDSubject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, "crd", ns, name)
}

// Entry is one spec.endpoints item.
func Entry(name, typ string, targets ...string) map[string]any {
	ts := make([]any, len(targets))
	for i, t := range targets {
		ts[i] = t
	}
	m := map[string]any{"dnsName": name, "recordType": typ}
	if targets != nil {
		m["targets"] = ts
	}
	return m
}

// DNSEndpoint is a DNSEndpoint of entries, to create with CreateDNSEndpoint.
func DNSEndpoint(name string, entries ...map[string]any) *unstructured.Unstructured {
	items := make([]any, len(entries))
	for i, e := range entries {
		items[i] = e
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1",
		"kind":       "DNSEndpoint",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"endpoints": items},
	}}
}

// CreateDNSEndpoint creates u in ns.
func CreateDNSEndpoint(tb testing.TB, dc dynamic.Interface, ns string, u *unstructured.Unstructured) *unstructured.Unstructured {
	tb.Helper()
	return CreateObject(tb, dc, DNSEndpointGVR, ns, u)
}
