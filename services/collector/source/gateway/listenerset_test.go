package gateway_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// lsDef is a ListenerSet a case creates, in the case's namespace (or with
// other in its second one), on the Gateway parent (in the second namespace
// with parentOther), as a controller would have accepted it.
type lsDef struct {
	name                string
	other, parentOther  bool
	parent              string
	ann                 map[string]string
	listeners           []gmap
	notAccepted         bool
	listenerNotAccepted string // a listener whose status says Accepted=False
	listenerNoStatus    string // a listener without status
}

func newLS(name, parent string, listeners ...gmap) lsDef {
	return lsDef{name: name, parent: parent, listeners: listeners}
}

func condition(typ string, ok bool) gmap {
	status, reason := "True", typ
	if !ok {
		status, reason = "False", "NotAllowed"
	}
	return gmap{"type": typ, "status": status, "reason": reason, "message": "test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

func createListenerSet(t *testing.T, dc dynamic.Interface, ns, ns2 string, l lsDef) {
	t.Helper()
	meta := gmap{"name": l.name, "namespace": ns}
	if l.other {
		meta["namespace"] = ns2
	}
	if l.ann != nil {
		meta["annotations"] = strMap(l.ann)
	}
	parent := gmap{"name": l.parent}
	if l.parentOther {
		parent["namespace"] = ns2
	}
	u := &unstructured.Unstructured{Object: gmap{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "ListenerSet", "metadata": meta,
		"spec": gmap{"parentRef": parent, "listeners": gwList(l.listeners...)},
	}}
	res := dc.Resource(gwGVR("listenersets")).Namespace(meta["namespace"].(string))
	got, err := res.Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create ListenerSet: %v", err)
	}
	var statuses []any
	for _, lis := range l.listeners {
		name := lis["name"].(string)
		if name == l.listenerNoStatus {
			continue
		}
		statuses = append(statuses, gmap{"name": name, "attachedRoutes": int64(1), "supportedKinds": gwList(gmap{"kind": "HTTPRoute"}),
			"conditions": gwList(condition("Accepted", name != l.listenerNotAccepted))})
	}
	st := gmap{"conditions": gwList(condition("Accepted", !l.notAccepted), condition("Programmed", !l.notAccepted))}
	if len(statuses) > 0 {
		st["listeners"] = statuses
	}
	got.Object["status"] = st
	if _, err := res.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("ListenerSet status: %v", err)
	}
}

// allowListeners sets a Gateway's spec.allowedListeners.namespaces.from
// (and, for Selector, the label its namespace selector matches).
func (g gwDef) allowListeners(from string, selector ...string) gwDef {
	ns := gmap{"from": from}
	if len(selector) == 2 {
		ns["selector"] = gmap{"matchLabels": gmap{selector[0]: selector[1]}}
	}
	g.allowedListeners = gmap{"namespaces": ns}
	return g
}

func toLS(name string, opts ...func(*gwParent)) gwParent {
	return attach(name, append([]func(*gwParent){refKind("gateway.networking.k8s.io", "ListenerSet")}, opts...)...)
}

// ExternalDNS v0.23's gateway_listenerset_test.go cases: with
// --gateway-listener-sets, a route whose parent is a ListenerSet gets the
// ListenerSet's accepted listeners on its parent Gateway, at the
// Gateway's addresses (or a target annotation).
func TestGatewayRuleListenerSets(t *testing.T) {
	on := func(c *collector.Config, _, _ string) { c.Gateway.ListenerSets = true }
	app := gwLis("app", "HTTP", 8080, lisHost("app.example.org"))
	gw := newGW("g", []string{gwIP}, gwLis("web", "HTTP", 80, lisHost("gw.example.org"))).allowListeners("Same")
	ls := newLS("ls", "g", app)
	want := []events.Endpoint{collectortest.EP("app.example.org", "A", gwIP)}
	r := gwRoute(nil, nil, toLS("ls"))
	runGatewayRules(t, []gwCase{
		{name: "route on a ListenerSet: its listener, the Gateway's address", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{ls}, route: r, want: want},
		{name: "wildcard listener hostname narrowed to the route's", cfg: on, gateways: []gwDef{gw},
			listenerSets: []lsDef{newLS("ls", "g", gwLis("app", "HTTP", 8080, lisHost("*.example.org")))},
			route:        gwRoute(gwHosts("foo.example.org"), nil, toLS("ls")), want: []events.Endpoint{collectortest.EP("foo.example.org", "A", gwIP)}},
		{name: "without --gateway-listener-sets: nothing", gateways: []gwDef{gw}, listenerSets: []lsDef{ls}, route: r},
		{name: "ListenerSet not accepted", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{func() lsDef { l := ls; l.notAccepted = true; return l }()}, route: r},
		{name: "Gateway allows no ListenerSets (the default)", cfg: on, gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb)}, listenerSets: []lsDef{ls}, route: r},
		{name: "Gateway allows None", cfg: on, gateways: []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("None")}, listenerSets: []lsDef{ls}, route: r},
		{name: "listener without status", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{func() lsDef { l := ls; l.listenerNoStatus = "app"; return l }()}, route: r},
		{name: "listener not accepted", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{func() lsDef { l := ls; l.listenerNotAccepted = "app"; return l }()}, route: r},
		{name: "route not accepted by the ListenerSet", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{ls}, route: gwRoute(nil, nil, toLS("ls", notAccepted))},
		{name: "parent Gateway not found", cfg: on, gateways: []gwDef{gw}, listenerSets: []lsDef{newLS("ls", "missing", app)}, route: r},
		{name: "sectionName picks a listener", cfg: on, gateways: []gwDef{gw},
			listenerSets: []lsDef{newLS("ls", "g", app, gwLis("api", "HTTP", 8081, lisHost("api.example.org")))},
			route:        gwRoute(nil, nil, toLS("ls", refSection("api"))), want: []events.Endpoint{collectortest.EP("api.example.org", "A", gwIP)}},
		{name: "Gateway target annotation", cfg: on, gateways: []gwDef{gw.withAnn(map[string]string{collectortest.Alpha + "target": "gw-lb.example.net"})},
			listenerSets: []lsDef{ls}, route: r, want: []events.Endpoint{collectortest.EP("app.example.org", "CNAME", "gw-lb.example.net")}},
		{name: "ListenerSet target annotation wins over the Gateway's", cfg: on,
			gateways: []gwDef{gw.withAnn(map[string]string{collectortest.Alpha + "target": "gw-lb.example.net"})},
			listenerSets: []lsDef{func() lsDef {
				l := ls
				l.ann = map[string]string{collectortest.Alpha + "target": "203.0.113.5"}
				return l
			}()},
			route: r, want: []events.Endpoint{collectortest.EP("app.example.org", "A", "203.0.113.5")}},
		{name: "allowedRoutes Same is the ListenerSet's namespace", cfg: on,
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("All").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r, want: want},
		{name: "allowedRoutes Same: a route of another namespace is not", cfg: on,
			gateways: []gwDef{gw.inOther()}, listenerSets: []lsDef{func() lsDef { l := ls; l.other, l.parentOther = true, true; return l }()},
			route: gwRoute(nil, nil, toLS("ls", inOtherNS))},
		{name: "cross-namespace ListenerSet selected by the Gateway", cfg: on, nsLabels: map[string]string{"ls": "yes"},
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("Selector", "ls", "yes").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r, want: want},
		{name: "cross-namespace ListenerSet not selected", cfg: on, nsLabels: map[string]string{"ls": "no"},
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("Selector", "ls", "yes").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r},
		{name: "--gateway-namespace limits Gateways, not ListenerSets", nsLabels: map[string]string{"ls": "yes"},
			cfg:          func(c *collector.Config, _, ns2 string) { c.Gateway.ListenerSets, c.Gateway.Namespace = true, ns2 },
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("All").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r, want: want},
		{name: "--gateway-label-filter applies to the parent Gateway",
			cfg: func(c *collector.Config, _, _ string) {
				c.Gateway.ListenerSets, c.Gateway.LabelFilter = true, "dns=yes"
			},
			gateways: []gwDef{gw.withLabels(map[string]string{"dns": "no"})}, listenerSets: []lsDef{ls}, route: r},
		{name: "--gateway-name applies to the parent Gateway",
			cfg:          func(c *collector.Config, _, _ string) { c.Gateway.ListenerSets, c.Gateway.Name = true, "g" },
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("All").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r, want: want},
		{name: "--gateway-name: another Gateway's ListenerSet",
			cfg:          func(c *collector.Config, _, _ string) { c.Gateway.ListenerSets, c.Gateway.Name = true, "other" },
			gateways:     []gwDef{newGW("g", []string{gwIP}, gwWeb).allowListeners("All").inOther()},
			listenerSets: []lsDef{func() lsDef { l := ls; l.parentOther = true; return l }()}, route: r},
	})
}

// A change of a ListenerSet, or of its Gateway, recomputes the routes
// attached to the ListenerSet.
func TestGatewayListenerSetIncremental(t *testing.T) {
	collectortest.InstallGatewayAPI(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns, ns2 := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	cfg := gatewayConfig(ns)
	cfg.Gateway.ListenerSets = true
	createGateway(t, dc, ns, newGW("g", []string{gwIP}, gwWeb).allowListeners("Same"))
	l := newLS("ls", "g", gwLis("app", "HTTP", 8080, lisHost("app.example.org")))
	l.notAccepted = true
	createListenerSet(t, dc, ns, ns2, l)
	collectortest.StartCollector(t, cfg)
	createRoute(t, dc, "gateway-httproute", ns, ns2, gwRoute(nil, nil, toLS("ls")))
	subj := events.SourceSubject(ns, "gateway-httproute", ns, "r")

	// Accepted now: the route's record appears.
	res := dc.Resource(gwGVR("listenersets")).Namespace(ns)
	got, err := res.Get(t.Context(), "ls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(got.Object, gwList(condition("Accepted", true), condition("Programmed", true)), "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("app.example.org", "A", gwIP)})

	// The Gateway's address changes: the route follows.
	gw, err := dc.Resource(gwGVR("gateways")).Namespace(ns).Get(t.Context(), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setGatewayAddresses(t, dc, gw, gwIP2)
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("app.example.org", "A", gwIP2)})
}
