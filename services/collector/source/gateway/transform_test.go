package gateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The cache holds typed routes without what the source never reads.
func TestRouteTransformTrims(t *testing.T) {
	out, err := routeTransform(HTTPRoute, []string{"meta.helm.sh/release-name"})(sampleRoute())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := out.(*gwv1.HTTPRoute)
	if !ok {
		t.Fatalf("transform gave %T, want *v1.HTTPRoute", out)
	}
	if r.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if _, ok := r.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Error("last-applied-configuration kept")
	}
	if r.Annotations["external-dns.alpha.kubernetes.io/ttl"] != "60" || r.Annotations["meta.helm.sh/release-name"] != "shop" {
		t.Errorf("needed annotations lost: %v", r.Annotations)
	}
	if r.Spec.Rules != nil {
		t.Error("rules kept")
	}
	if len(r.Spec.Hostnames) != 2 || len(r.Status.Parents) != 2 {
		t.Fatalf("hostnames %v, parents %d", r.Spec.Hostnames, len(r.Status.Parents))
	}
	for _, p := range r.Status.Parents {
		want := []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue}}
		if len(p.Conditions) != 1 || p.Conditions[0] != want[0] || p.ControllerName != "" {
			t.Errorf("parent %s: conditions %+v, controller %q", p.ParentRef.Name, p.Conditions, p.ControllerName)
		}
	}
	if r.Kind != "HTTPRoute" || r.APIVersion != "gateway.networking.k8s.io/v1" {
		t.Errorf("TypeMeta %+v lost: events and templates need it", r.TypeMeta)
	}
}

// A route the typed struct cannot hold stays unstructured (reported when
// read) instead of failing the informer's list.
func TestRouteTransformKeepsUndecodable(t *testing.T) {
	u := sampleRoute()
	u.Object["spec"] = map[string]any{"hostnames": "not-a-list"}
	out, err := routeTransform(HTTPRoute, nil)(u)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.(*unstructured.Unstructured); !ok {
		t.Fatalf("transform gave %T, want the unstructured object", out)
	}
	if keys, _ := parentKeys(out); keys != nil {
		t.Errorf("undecodable route indexed under %v", keys)
	}
}

func TestMatchHost(t *testing.T) {
	for _, tc := range []struct {
		listener, route, want string
		ok                    bool
	}{
		{"", "a.example.org", "a.example.org", true},
		{"a.example.org", "", "a.example.org", true},
		{"a.example.org", "A.Example.org", "a.example.org", true},
		{"a.example.org", "b.example.org", "", false},
		{"*.example.org", "a.example.org", "a.example.org", true},
		{"*.example.org", "x.a.example.org", "x.a.example.org", true},
		{"*.example.org", "example.org", "", false},
		{"a.example.org", "*.example.org", "a.example.org", true},
		{"*.a.example.org", "*.example.org", "*.a.example.org", true},
		{"*.example.org", "*.example.org", "*.example.org", true},
		{"*.example.org", "aexample.org", "", false},
		{"192.0.2.1", "", "", false},
		{"", "bad..example.org", "", false},
	} {
		got, ok := matchHost(tc.listener, tc.route)
		if got != tc.want || ok != tc.ok {
			t.Errorf("matchHost(%q, %q) = %q, %v; want %q, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

// The cache holds typed Gateways with listeners, target annotation and
// addresses, without TLS settings, conditions or foreign annotations.
func TestGatewayTransformTrims(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "public", "namespace": "infra",
			"labels": map[string]any{"dns": "yes"},
			"annotations": map[string]any{
				"external-dns.alpha.kubernetes.io/target":          "lb.example.net",
				"kubectl.kubernetes.io/last-applied-configuration": "{}",
			},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
		"spec": map[string]any{"gatewayClassName": "c", "listeners": []any{map[string]any{
			"name": "https", "protocol": "HTTPS", "port": int64(443), "hostname": "*.example.org",
			"tls":           map[string]any{"mode": "Terminate", "certificateRefs": []any{map[string]any{"name": "cert"}}},
			"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
		}}},
		"status": map[string]any{
			"addresses":  []any{map[string]any{"type": "IPAddress", "value": "192.0.2.1"}},
			"conditions": []any{map[string]any{"type": "Programmed", "status": "True"}},
			"listeners":  []any{map[string]any{"name": "https", "attachedRoutes": int64(3)}},
		},
	}}
	out, err := gatewayTransform(nil)(u)
	if err != nil {
		t.Fatal(err)
	}
	gw, ok := out.(*gwv1.Gateway)
	if !ok {
		t.Fatalf("transform gave %T, want *v1.Gateway", out)
	}
	if gw.ManagedFields != nil || len(gw.Annotations) != 1 || gw.Annotations["external-dns.alpha.kubernetes.io/target"] == "" {
		t.Errorf("metadata not trimmed as wanted: %+v", gw.ObjectMeta)
	}
	if len(gw.Spec.Listeners) != 1 || gw.Spec.Listeners[0].TLS != nil || gw.Spec.Listeners[0].AllowedRoutes == nil ||
		gw.Spec.Listeners[0].Hostname == nil || *gw.Spec.Listeners[0].Hostname != "*.example.org" {
		t.Errorf("listeners %+v", gw.Spec.Listeners)
	}
	if gw.Status.Conditions != nil || gw.Status.Listeners != nil || len(gw.Status.Addresses) != 1 {
		t.Errorf("status %+v", gw.Status)
	}
	if gw.Labels["dns"] != "yes" || gw.Kind != "Gateway" {
		t.Errorf("labels %v, kind %q", gw.Labels, gw.Kind)
	}
}
