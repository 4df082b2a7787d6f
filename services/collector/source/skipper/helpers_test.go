package skipper_test

import (
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/skipper"
)

var routeGroups = schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "routegroups"}

// routeGroup is a RouteGroup to create: hosts, and the load balancer
// entries (IPs or hostnames) Skipper's controller writes in its status.
type routeGroup struct {
	name        string
	annotations map[string]string
	hosts       []string
	lb          []string
}

// create creates the RouteGroup (with the one backend Skipper's CRD
// requires) and writes its status through the status subresource.
func (r routeGroup) create(t *testing.T, dc dynamic.Interface, ns string) {
	t.Helper()
	spec := map[string]any{"backends": []any{map[string]any{"name": "shunt", "type": "shunt"}}}
	if len(r.hosts) > 0 {
		hosts := make([]any, len(r.hosts))
		for i, h := range r.hosts {
			hosts[i] = h
		}
		spec["hosts"] = hosts
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "zalando.org/v1", "kind": "RouteGroup",
		"metadata": map[string]any{"name": r.name}, "spec": spec,
	}}
	u.SetAnnotations(r.annotations)
	got := collectortest.CreateObject(t, dc, routeGroups, ns, u)
	if r.lb == nil {
		return
	}
	setLoadBalancer(t, dc, got, r.lb...)
}

func setLoadBalancer(t *testing.T, dc dynamic.Interface, u *unstructured.Unstructured, lb ...string) {
	t.Helper()
	entries := []any{}
	for _, a := range lb {
		if _, err := netip.ParseAddr(a); err == nil {
			entries = append(entries, map[string]any{"ip": a})
		} else {
			entries = append(entries, map[string]any{"hostname": a})
		}
	}
	u = u.DeepCopy()
	u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"routegroup": entries}}
	if _, err := dc.Resource(routeGroups).Namespace(u.GetNamespace()).UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func config(ns string) collector.Config {
	return collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{skipper.Name}}
}

func subject(ns, name string) string {
	return events.SourceSubject(ns, skipper.Name, ns, name)
}
