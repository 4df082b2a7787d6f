package gateway_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

const gwPoll = 100 * time.Millisecond

func gwGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: resource}
}

// routeGVR is the resource of a Gateway API kind at a version (v1 unless
// a test of an older CRD says otherwise).
func routeGVR(resource, version string) schema.GroupVersionResource {
	g := gwGVR(resource)
	g.Version = version
	return g
}

// routeKinds maps a source name to its kind and resource.
var routeKinds = map[string]struct{ kind, resource string }{
	"gateway-httproute": {"HTTPRoute", "httproutes"},
	"gateway-grpcroute": {"GRPCRoute", "grpcroutes"},
	"gateway-tlsroute":  {"TLSRoute", "tlsroutes"},
	"gateway-tcproute":  {"TCPRoute", "tcproutes"},
	"gateway-udproute":  {"UDPRoute", "udproutes"},
}

// gmap is shorthand for the nested maps of unstructured objects.
type gmap = map[string]any

func gwList[T any](items ...T) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

// lis is a listener; HTTPS and TLS listeners get the tls block the CRD
// requires.
func gwLis(name, protocol string, port int64, opts ...func(gmap)) gmap {
	l := gmap{"name": name, "protocol": protocol, "port": port}
	switch protocol {
	case "HTTPS":
		l["tls"] = gmap{"mode": "Terminate", "certificateRefs": gwList(gmap{"name": "cert"})}
	case "TLS":
		l["tls"] = gmap{"mode": "Passthrough"}
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

func lisHost(h string) func(gmap) { return func(l gmap) { l["hostname"] = h } }

func allowFrom(from string) func(gmap) {
	return func(l gmap) { allowed(l)["namespaces"] = gmap{"from": from} }
}

var gwAll = allowFrom("All")

func allowSelector(key, value string) func(gmap) {
	return func(l gmap) {
		allowed(l)["namespaces"] = gmap{"from": "Selector", "selector": gmap{"matchLabels": gmap{key: value}}}
	}
}

// allowKinds lists allowed kinds, each "Kind" or "group/Kind".
func allowKinds(kinds ...string) func(gmap) {
	return func(l gmap) {
		var ks []any
		for _, k := range kinds {
			if g, kind, ok := strings.Cut(k, "/"); ok {
				ks = append(ks, gmap{"group": g, "kind": kind})
			} else {
				ks = append(ks, gmap{"kind": k})
			}
		}
		allowed(l)["kinds"] = ks
	}
}

func allowed(l gmap) gmap {
	a, ok := l["allowedRoutes"].(gmap)
	if !ok {
		a = gmap{}
		l["allowedRoutes"] = a
	}
	return a
}

// gwDef is a Gateway a case creates: in the case's namespace, or with
// other in its second one; addrs become status.addresses.
type gwDef struct {
	name      string
	other     bool
	labels    map[string]string
	ann       map[string]string
	listeners []gmap
	addrs     []string
	// version is the API version it is created at (default v1).
	version string
	// allowedListeners is spec.allowedListeners (allowListeners).
	allowedListeners gmap
}

func newGW(name string, addrs []string, listeners ...gmap) gwDef {
	return gwDef{name: name, addrs: addrs, listeners: listeners}
}

func (g gwDef) inOther() gwDef                       { g.other = true; return g }
func (g gwDef) withLabels(l map[string]string) gwDef { g.labels = l; return g }
func (g gwDef) withAnn(a map[string]string) gwDef    { g.ann = a; return g }

func strMap(in map[string]string) gmap {
	if in == nil {
		return nil
	}
	out := gmap{}
	for k, v := range in {
		out[k] = v
	}
	return out
}

func createGateway(t testing.TB, dc dynamic.Interface, ns string, g gwDef) {
	t.Helper()
	meta := gmap{"name": g.name, "namespace": ns}
	if g.labels != nil {
		meta["labels"] = strMap(g.labels)
	}
	if g.ann != nil {
		meta["annotations"] = strMap(g.ann)
	}
	if g.version == "" {
		g.version = "v1"
	}
	u := &unstructured.Unstructured{Object: gmap{
		"apiVersion": "gateway.networking.k8s.io/" + g.version, "kind": "Gateway", "metadata": meta,
		"spec": gmap{"gatewayClassName": "zs", "listeners": gwList(g.listeners...)},
	}}
	if g.allowedListeners != nil {
		u.Object["spec"].(gmap)["allowedListeners"] = g.allowedListeners
	}
	got, err := dc.Resource(routeGVR("gateways", g.version)).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Gateway %s/%s: %v", ns, g.name, err)
	}
	if len(g.addrs) > 0 {
		setGatewayAddresses(t, dc, got, g.addrs...)
	}
}

func setGatewayAddresses(t testing.TB, dc dynamic.Interface, u *unstructured.Unstructured, addrs ...string) {
	t.Helper()
	var as []any
	for _, a := range addrs {
		typ := "Hostname"
		if strings.Trim(a, "0123456789.") == "" || strings.Contains(a, ":") {
			typ = "IPAddress"
		}
		as = append(as, gmap{"type": typ, "value": a})
	}
	u = u.DeepCopy()
	if err := unstructured.SetNestedSlice(u.Object, as, "status", "addresses"); err != nil {
		t.Fatal(err)
	}
	res := gwGVR("gateways")
	res.Version = u.GroupVersionKind().Version
	if _, err := dc.Resource(res).Namespace(u.GetNamespace()).UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Gateway status: %v", err)
	}
}

// gwParent is one parentRef of a route and whether the Gateway accepted it.
type gwParent struct {
	ref      gmap
	accepted bool
	// other: the parentRef names the case's second namespace.
	other bool
	// stale: only in status.parents, as a status is until the Gateway's
	// controller sees a parentRef removed from the spec.
	stale bool
}

func attach(gateway string, opts ...func(*gwParent)) gwParent {
	p := gwParent{ref: gmap{"name": gateway}, accepted: true}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func inOtherNS(p *gwParent)   { p.other = true }
func staleStatus(p *gwParent) { p.stale = true }
func notAccepted(p *gwParent) { p.accepted = false }
func refSection(s string) func(*gwParent) {
	return func(p *gwParent) { p.ref["sectionName"] = s }
}
func refPort(n int64) func(*gwParent) { return func(p *gwParent) { p.ref["port"] = n } }
func refKind(group, kind string) func(*gwParent) {
	return func(p *gwParent) { p.ref["group"], p.ref["kind"] = group, kind }
}

// gwRouteDef is a route a case creates: spec.hostnames, annotations, labels, and
// its parents (spec.parentRefs and, as a controller would write it,
// status.parents).
type gwRouteDef struct {
	name    string
	hosts   []string
	ann     map[string]string
	labels  map[string]string
	parents []gwParent
}

func gwRoute(hosts []string, ann map[string]string, parents ...gwParent) gwRouteDef {
	return gwRouteDef{name: "r", hosts: hosts, ann: ann, parents: parents}
}

func createRoute(t testing.TB, dc dynamic.Interface, src, ns, ns2 string, r gwRouteDef) {
	t.Helper()
	createRouteAt(t, dc, "v1", src, ns, ns2, r)
}

func createRouteAt(t testing.TB, dc dynamic.Interface, version, src, ns, ns2 string, r gwRouteDef) {
	t.Helper()
	k := routeKinds[src]
	meta := gmap{"name": r.name, "namespace": ns}
	if r.ann != nil {
		meta["annotations"] = strMap(r.ann)
	}
	if r.labels != nil {
		meta["labels"] = strMap(r.labels)
	}
	spec := gmap{}
	if len(r.hosts) > 0 {
		spec["hostnames"] = gwList(r.hosts...)
	}
	if k.kind == "TLSRoute" || k.kind == "TCPRoute" || k.kind == "UDPRoute" {
		spec["rules"] = gwList(gmap{"backendRefs": gwList(gmap{"name": "backend", "port": int64(80)})})
	}
	var refs, statuses []any
	for _, p := range r.parents {
		ref := gmap{}
		for key, v := range p.ref {
			ref[key] = v
		}
		if p.other {
			ref["namespace"] = ns2
		}
		if !p.stale {
			refs = append(refs, ref)
		}
		status, reason := "True", "Accepted"
		if !p.accepted {
			status, reason = "False", "NotAllowedByListeners"
		}
		statuses = append(statuses, gmap{
			"parentRef": ref, "controllerName": "example.org/zs-test",
			"conditions": gwList(
				gmap{"type": "Accepted", "status": status, "reason": reason, "message": "test",
					"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)},
				gmap{"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": "test",
					"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}),
		})
	}
	if len(refs) > 0 {
		spec["parentRefs"] = refs
	}
	if len(refs) == 0 && len(statuses) > 0 {
		// The CRD wants a parentRef: one to a Gateway no status names.
		spec["parentRefs"] = gwList(gmap{"name": "elsewhere"})
	}
	u := &unstructured.Unstructured{Object: gmap{
		"apiVersion": "gateway.networking.k8s.io/" + version, "kind": k.kind, "metadata": meta, "spec": spec,
	}}
	res := dc.Resource(routeGVR(k.resource, version)).Namespace(ns)
	got, err := res.Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", k.kind, ns, r.name, err)
	}
	if len(statuses) == 0 {
		return
	}
	if err := unstructured.SetNestedSlice(got.Object, statuses, "status", "parents"); err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("%s status: %v", k.kind, err)
	}
}

func labelNamespace(t *testing.T, ns string, l map[string]string) {
	t.Helper()
	n, err := collectortest.Cluster.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = l
	if _, err := collectortest.Cluster.Client.CoreV1().Namespaces().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func gatewayConfig(ns string, sources ...string) collector.Config {
	if len(sources) == 0 {
		sources = []string{"gateway-httproute"}
	}
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: sources}
	cfg.Gateway.PollInterval = gwPoll
	return cfg
}

// barrierName names the barrier Gateway.
const barrierName = "zz-barrier"

// barrierGateway accepts every route kind from every namespace; named
// name (barrierName unless a case's --gateway-name says otherwise).
func barrierGateway(name string) gwDef {
	return newGW(name, []string{"192.0.2.254"},
		gwLis("http", "HTTP", 80, gwAll), gwLis("tls", "TLS", 443, gwAll), gwLis("tcp", "TCP", 9000, gwAll), gwLis("udp", "UDP", 9001, gwAll),
	).withLabels(map[string]string{"dns": "yes"})
}

// gatewayBarrier creates a route on the barrier Gateway gwNS/gwName and
// waits for it: with one worker, every route event before it has been
// processed.
func gatewayBarrier(t *testing.T, dc dynamic.Interface, src, ns, gwNS, gwName string) {
	t.Helper()
	host := "barrier." + ns + ".test"
	p := attach(gwName)
	p.ref["namespace"] = gwNS
	r := gwRouteDef{name: "zz-barrier", ann: map[string]string{collectortest.Alpha + "hostname": host, "dns": "yes"},
		labels: map[string]string{"dns": "yes"}, parents: []gwParent{p}}
	if src == "gateway-tlsroute" {
		r.hosts = []string{host}
	}
	createRoute(t, dc, src, ns, "", r)
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "zz-barrier"), []events.Endpoint{collectortest.EP(host, "A", "192.0.2.254")})
}

// gwCase is one case of a rule: Gateways, a route, what it publishes.
type gwCase struct {
	name string
	// src is the source (default gateway-httproute).
	src string
	// cfg adapts the collector's config; ns2 is the second namespace.
	cfg      func(c *collector.Config, ns, ns2 string)
	nsLabels map[string]string
	gateways []gwDef
	// listenerSets are created after the Gateways.
	listenerSets []lsDef
	route        gwRouteDef
	// want: nil means nothing is published. Labels and set identifiers
	// are compared too.
	want []events.Endpoint
}

// runGatewayRules runs every case with a collector of its own (cluster
// name and route namespace per case) against the real API server.
func runGatewayRules(t *testing.T, cases []gwCase) {
	t.Helper()
	collectortest.InstallGatewayAPI(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, ns2 := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
			src := tc.src
			if src == "" {
				src = "gateway-httproute"
			}
			if tc.nsLabels != nil {
				labelNamespace(t, ns, tc.nsLabels)
			}
			cfg := gatewayConfig(ns, src)
			if tc.cfg != nil {
				tc.cfg(&cfg, ns, ns2)
			}
			barrierNS := ns
			if cfg.Gateway.Namespace == ns2 {
				barrierNS = ns2
			}
			// With --gateway-name only a Gateway of that name counts:
			// the barrier takes it (the case's own are in ns2).
			barrier := barrierName
			if cfg.Gateway.Name != "" {
				barrier = cfg.Gateway.Name
			}
			createGateway(t, dc, barrierNS, barrierGateway(barrier))
			for _, g := range tc.gateways {
				gns := ns
				if g.other {
					gns = ns2
				}
				createGateway(t, dc, gns, g)
			}
			for _, l := range tc.listenerSets {
				createListenerSet(t, dc, ns, ns2, l)
			}
			// Started after the Gateways exist: they are in its cache
			// before the route arrives.
			collectortest.StartCollector(t, cfg)
			r := tc.route
			createRoute(t, dc, src, ns, ns2, r)
			subj := events.SourceSubject(ns, src, ns, r.name)
			if tc.want == nil {
				gatewayBarrier(t, dc, src, ns, barrierNS, barrier)
				if s, ok := collectortest.LastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", collectortest.Render(s.Endpoints))
				}
				return
			}
			s := collectortest.WaitState(t, subj, tc.want)
			if !gwSameEndpoints(s.Endpoints, tc.want) {
				t.Fatalf("endpoints %+v, want %+v", s.Endpoints, tc.want)
			}
			wantRef := events.ObjectRef{Cluster: ns, Source: src, Namespace: ns, Name: r.name}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
		})
	}
}

// sameEndpoints compares everything, labels and set identifiers included.
func gwSameEndpoints(got, want []events.Endpoint) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	events.SortEndpoints(got)
	events.SortEndpoints(want)
	for i := range got {
		if len(got[i].Labels) == 0 {
			got[i].Labels = nil
		}
	}
	for i := range want {
		if len(want[i].Labels) == 0 {
			want[i].Labels = nil
		}
	}
	return reflect.DeepEqual(got, want)
}

func withEpLabel(e events.Endpoint, k, v string) events.Endpoint {
	e.Labels = map[string]string{k: v}
	return e
}
