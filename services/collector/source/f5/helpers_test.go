package f5_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/f5"
)

var (
	virtualServers   = schema.GroupVersionResource{Group: "cis.f5.com", Version: "v1", Resource: "virtualservers"}
	transportServers = schema.GroupVersionResource{Group: "cis.f5.com", Version: "v1", Resource: "transportservers"}
)

// kind is one of the two F5 sources, as the tests drive it.
type kind struct {
	source   string
	kind     string
	resource schema.GroupVersionResource
	// required are the spec fields F5's CRD requires of the kind.
	required map[string]any
}

var (
	vsKind = kind{source: f5.VirtualServerName, kind: "VirtualServer", resource: virtualServers}
	tsKind = kind{source: f5.TransportServerName, kind: "TransportServer", resource: transportServers,
		required: map[string]any{"virtualServerPort": int64(443), "mode": "standard",
			"pool": map[string]any{"service": "app", "servicePort": int64(8443)}}}
)

// server is an F5 object to create: its spec fields and, when vsAddress
// is not empty, the status BIG-IP would write.
type server struct {
	name        string
	annotations map[string]string
	host        string
	aliases     []string
	address     string // spec.virtualServerAddress
	vsAddress   string // status.vsAddress
	status      string // status.status
}

func (k kind) object(s server) *unstructured.Unstructured {
	spec := map[string]any{}
	for f, v := range k.required {
		spec[f] = v
	}
	if s.host != "" {
		spec["host"] = s.host
	}
	if s.address != "" {
		spec["virtualServerAddress"] = s.address
	} else {
		// F5's CRD wants one of the two: without an address, IPAM
		// assigns one, which BIG-IP's controller writes in the status.
		spec["ipamLabel"] = "test"
	}
	if s.aliases != nil {
		list := make([]any, len(s.aliases))
		for i, a := range s.aliases {
			list[i] = a
		}
		spec["hostAliases"] = list
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cis.f5.com/v1", "kind": k.kind,
		"metadata": map[string]any{"name": s.name}, "spec": spec,
	}}
	u.SetAnnotations(s.annotations)
	return u
}

// create creates the object and writes its status (a subresource, as
// BIG-IP's controller writes it).
func (k kind) create(t *testing.T, dc dynamic.Interface, ns string, s server) {
	t.Helper()
	got := collectortest.CreateObject(t, dc, k.resource, ns, k.object(s))
	if s.vsAddress == "" && s.status == "" {
		return
	}
	k.setStatus(t, dc, got, s.vsAddress, s.status)
}

func (k kind) setStatus(t *testing.T, dc dynamic.Interface, u *unstructured.Unstructured, vsAddress, status string) {
	t.Helper()
	u = u.DeepCopy()
	st := map[string]any{"vsAddress": vsAddress}
	if status != "" {
		st["status"] = status
	}
	u.Object["status"] = st
	if _, err := dc.Resource(k.resource).Namespace(u.GetNamespace()).UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func config(ns string, sources ...string) collector.Config {
	return collector.Config{ClusterName: ns, Namespace: ns, Sources: sources}
}

func subject(clusterName, source, ns, name string) string {
	return events.SourceSubject(clusterName, source, ns, name)
}
