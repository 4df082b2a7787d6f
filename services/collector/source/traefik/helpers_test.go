package traefik_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

const (
	groupNew    = "traefik.io"
	groupLegacy = "traefik.containo.us"
)

// A kind of Traefik object, as the tests create it.
type kind struct {
	group, kind, resource string
}

func (k kind) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.group, Version: "v1alpha1", Resource: k.resource}
}

func ingressRoute(group string) kind    { return kind{group, "IngressRoute", "ingressroutes"} }
func ingressRouteTCP(group string) kind { return kind{group, "IngressRouteTCP", "ingressroutetcps"} }
func ingressRouteUDP(group string) kind { return kind{group, "IngressRouteUDP", "ingressrouteudps"} }

// object is a Traefik object with one route per match rule (UDP: one
// route to a Service, UDP routes match nothing; no rule: one that names
// no host).
func (k kind) object(name string, annotations, labels map[string]string, matches ...string) *unstructured.Unstructured {
	var routes []any
	if k.kind == "IngressRouteUDP" {
		routes = []any{map[string]any{"services": []any{map[string]any{"name": "dns", "port": int64(53)}}}}
	}
	switch {
	case len(matches) > 0 || k.kind == "IngressRouteUDP":
	case k.kind == "IngressRouteTCP":
		matches = []string{"HostSNI(`*`)"} // the CRD requires a route
	default:
		matches = []string{"PathPrefix(`/`)"}
	}
	for _, m := range matches {
		r := map[string]any{"match": m, "services": []any{map[string]any{"name": "web", "port": int64(80)}}}
		if k.kind == "IngressRoute" {
			r["kind"] = "Rule" // Traefik v2's CRD requires it
		}
		routes = append(routes, r)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.group + "/v1alpha1", "kind": k.kind,
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"routes": routes},
	}}
	u.SetAnnotations(annotations)
	u.SetLabels(labels)
	return u
}

func (k kind) create(t *testing.T, ns string, u *unstructured.Unstructured) {
	t.Helper()
	collectortest.CreateObject(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), k.gvr(), ns, u)
}

// subject is where the collector publishes the object: its key's name
// carries the kind, "<resource>.<group>/<name>".
func (k kind) subject(ns, name string) string {
	return events.SourceSubject(ns, "traefik-proxy", ns, k.resource+"."+k.group+"/"+name)
}

func traefikConfig(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"traefik-proxy"}}
	cfg.Traefik.PollInterval = 100 * time.Millisecond
	return cfg
}

// full renders endpoints with what collectortest.Render leaves out: set
// identifier and provider-specific properties.
func full(eps []events.Endpoint) string {
	events.SortEndpoints(eps)
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintf(&b, "%s %s ttl=%d %v set=%q %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets, e.SetIdentifier, e.ProviderSpecific)
	}
	return b.String()
}

// expectFull starts a collector with cfg and checks that it publishes
// exactly want (compared in full) for subj, or nothing for an empty want.
func expectFull(t *testing.T, cfg collector.Config, subj string, want []events.Endpoint) {
	t.Helper()
	collectortest.StartCollector(t, cfg)
	if len(want) == 0 {
		if s, ok := collectortest.LastState(t, subj); ok {
			t.Fatalf("published %v, want nothing", full(s.Endpoints))
		}
		return
	}
	got := collectortest.WaitState(t, subj, slices.Clone(want))
	if full(got.Endpoints) != full(want) {
		t.Fatalf("published\n%swant\n%s", full(got.Endpoints), full(want))
	}
}

// cnames are the endpoints of names, each a CNAME to target.
func cnames(target string, names ...string) []events.Endpoint {
	var eps []events.Endpoint
	for _, n := range names {
		eps = append(eps, collectortest.EP(n, "CNAME", target))
	}
	return eps
}

func withProps(e events.Endpoint, kv ...string) events.Endpoint {
	for i := 0; i+1 < len(kv); i += 2 {
		e.ProviderSpecific = append(e.ProviderSpecific, events.ProviderSpecificProperty{Name: kv[i], Value: kv[i+1]})
	}
	return e
}
