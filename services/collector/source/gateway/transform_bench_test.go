package gateway

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sampleRoute is an HTTPRoute as a cluster serves it: managedFields, a
// kubectl last-applied copy, 8 rules with matches, filters and backends,
// two parents with their conditions.
func sampleRoute() *unstructured.Unstructured {
	var rules []any
	for i := range 8 {
		rules = append(rules, map[string]any{
			"matches": []any{map[string]any{
				"path":    map[string]any{"type": "PathPrefix", "value": fmt.Sprintf("/api/v%d", i)},
				"headers": []any{map[string]any{"name": "x-tenant", "value": "blue"}},
			}},
			"filters": []any{map[string]any{"type": "RequestHeaderModifier",
				"requestHeaderModifier": map[string]any{"add": []any{map[string]any{"name": "x-route", "value": "r"}}}}},
			"backendRefs": []any{map[string]any{"name": fmt.Sprintf("svc-%d", i), "port": int64(8080), "weight": int64(1)}},
		})
	}
	cond := func(typ string) any {
		return map[string]any{"type": typ, "status": "True", "reason": typ, "message": "accepted by the controller",
			"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(3)}
	}
	var parents []any
	for _, gw := range []string{"public", "internal"} {
		parents = append(parents, map[string]any{
			"parentRef":      map[string]any{"name": gw, "sectionName": "https"},
			"controllerName": "example.org/gateway-controller",
			"conditions":     []any{cond("Accepted"), cond("ResolvedRefs")},
		})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{
			"name": "shop", "namespace": "web", "resourceVersion": "12345", "generation": int64(3),
			"labels": map[string]any{"app": "shop"},
			"annotations": map[string]any{
				"external-dns.alpha.kubernetes.io/ttl":             "60",
				"kubectl.kubernetes.io/last-applied-configuration": string(make([]byte, 3000)),
				"meta.helm.sh/release-name":                        "shop",
			},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:rules": string(make([]byte, 2000))}}}},
		},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "public"}, map[string]any{"name": "internal"}},
			"hostnames":  []any{"shop.example.org", "www.shop.example.org"},
			"rules":      rules,
		},
		"status": map[string]any{"parents": parents},
	}}
	return u
}

// BenchmarkRouteTransform measures the route transform and reports how
// many bytes (as JSON) of a typical HTTPRoute the cache keeps.
//
//	go test -bench RouteTransform -benchmem ./source/gateway
func BenchmarkRouteTransform(b *testing.B) {
	tf := routeTransform(HTTPRoute, nil)
	in := sampleRoute()
	before, _ := json.Marshal(in.Object)
	out, err := tf(in.DeepCopy())
	if err != nil {
		b.Fatal(err)
	}
	after, _ := json.Marshal(out)
	for b.Loop() {
		b.StopTimer()
		obj := in.DeepCopy() // the informer hands over a fresh object
		b.StartTimer()
		if _, err := tf(obj); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(before)), "bytes-in")
	b.ReportMetric(float64(len(after)), "bytes-cached")
}

// BenchmarkMatchHost measures hostname narrowing, run for every route
// name and listener.
func BenchmarkMatchHost(b *testing.B) {
	pairs := [][2]string{
		{"*.example.org", "shop.example.org"}, {"shop.example.org", "*.example.org"},
		{"", "shop.example.org"}, {"api.example.net", "shop.example.org"},
	}
	for b.Loop() {
		for _, p := range pairs {
			matchHost(p[0], p[1])
		}
	}
}
