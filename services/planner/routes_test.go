package planner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
)

// providers is a planner state fed, as in production, with zone lists of
// providers declared by flags and by DNSProvider objects, on a real
// JetStream; each pass' plans are read back from the plans stream.
type providers struct {
	t  *testing.T
	s  *run
	js jetstream.JetStream
}

func newProviders(t *testing.T, cfg Config) *providers {
	_, js := startBus(t)
	s := freshRun(t, js, cfg)
	delete(s.zones, "p") // only the zones the test lists
	feed(t, s, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c"}})
	return &providers{t: t, s: s, js: js}
}

// list feeds provider's zone list; scope nil: declared by flags.
func (g *providers) list(provider string, scope *events.ProviderScope, zones ...string) {
	g.t.Helper()
	feed(g.t, g.s, events.ZonesSubject(provider), &events.ZoneList{Provider: provider, Zones: zones, Scope: scope})
}

// declared is the scope of DNSProvider ns/dns, for namespaces.
func declared(ns string, namespaces ...string) *events.ProviderScope {
	return &events.ProviderScope{Declared: events.DeclaredProvider(ns, "dns"), Namespaces: namespaces}
}

// want: an object of namespace ns wants name at ip; ip "": nothing wanted.
func (g *providers) want(ns, name, ip string) {
	g.t.Helper()
	d := &events.DesiredState{DNSName: name}
	if ip != "" {
		d.Endpoints = []events.Endpoint{rr(name, "A", 0, ip)}
		d.Contributors = []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: ns, Name: "web"}}
	}
	feed(g.t, g.s, events.DesiredSubject(name), d)
}

// hold: provider holds name's A record at ip with our ownership record of
// it, naming the Service web of the provider's namespace; ip "": it holds
// nothing there any more (as its applier reports a delete).
func (g *providers) hold(provider, zone, name, ip string) {
	g.t.Helper()
	var a, txt []events.Endpoint
	if ip != "" {
		ns, _, _ := strings.Cut(provider, "/")
		a = []events.Endpoint{rr(name, "A", 300, ip)}
		txt = []events.Endpoint{rr("a-"+name, "TXT", 300, owned("me", "service/"+ns+"/web"))}
	}
	feed(g.t, g.s, events.ObservedSubject(provider, name), &events.ObservedState{Provider: provider, Zone: zone, DNSName: name, Records: a})
	feed(g.t, g.s, events.ObservedSubject(provider, "a-"+name), &events.ObservedState{Provider: provider, Zone: zone,
		DNSName: "a-" + name, Records: txt})
}

// pass plans once and returns the changes queued, "provider action type
// name [targets]", sorted (the targets of ownership records left out:
// the registry tests check them). Each pass starts with every zone free.
func (g *providers) pass() []string {
	g.t.Helper()
	ctx := context.Background()
	g.s.flights = map[zoneKey]*flight{}
	g.s.plan(ctx)
	var lines []string
	for _, p := range takePlans(g.t, g.js) {
		for _, c := range p.Changes {
			k := c.Key()
			line := strings.Join([]string{p.Provider, c.Action(), k.RecordType, k.DNSName}, " ")
			if c.New != nil && k.RecordType != events.RecordTypeTXT {
				line += " " + strings.Join(c.New.Targets, "|")
			}
			lines = append(lines, line)
		}
	}
	slices.Sort(lines)
	return lines
}

func (g *providers) expect(what string, want ...string) {
	g.t.Helper()
	if got := g.pass(); !slices.Equal(got, want) {
		g.t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestNamesArePlannedOnlyWhereRoutingSends: two teams' DNSProviders and
// a provider declared by flags for the parent zone. A team's name goes to
// its own provider alone; a name of another team's zone goes nowhere, not
// even to the flags' parent zone, and what the flags' provider holds
// there is neither changed nor deleted.
func TestNamesArePlannedOnlyWhereRoutingSends(t *testing.T) {
	g := newProviders(t, Config{})
	g.list("a/dns", declared("a", "a"), "a.example.com")
	g.list("b/dns", declared("b", "b"), "b.example.com")
	g.list("flags", nil, "example.com")
	routedA := testutil.ToFloat64(namesRouted.WithLabelValues("a/dns"))
	notAllowed := testutil.ToFloat64(namesRefused.WithLabelValues(string("NamespaceNotAllowed")))

	g.want("a", "www.a.example.com", "192.0.2.1")
	g.expect("namespace a's name in a/dns' zone", "a/dns create A www.a.example.com 192.0.2.1",
		"a/dns create TXT a-www.a.example.com")

	// The flags' provider holds our records at x.a.example.com; namespace
	// b's object now wants it elsewhere: a/dns does not serve b.
	g.hold("flags", "example.com", "x.a.example.com", "192.0.2.9")
	g.want("b", "x.a.example.com", "192.0.2.2")
	g.expect("namespace b's name in a/dns' zone: planned nowhere, nothing deleted")

	g.want("a", "www.example.com", "192.0.2.3")
	g.expect("a name only the flags' provider holds", "flags create A www.example.com 192.0.2.3",
		"flags create TXT a-www.example.com")

	if got := testutil.ToFloat64(namesRouted.WithLabelValues("a/dns")) - routedA; got != 1 {
		t.Errorf("names routed to a/dns: %v more, want 1", got)
	}
	if got := testutil.ToFloat64(namesRefused.WithLabelValues("NamespaceNotAllowed")) - notAllowed; got != 1 {
		t.Errorf("names refused NamespaceNotAllowed: %v more, want 1", got)
	}

	// Nothing wants x.a.example.com any more: as before DNSProviders, the
	// provider holding our records there deletes them.
	g.want("b", "x.a.example.com", "")
	g.expect("unwanted name", "flags delete A x.a.example.com", "flags delete TXT a-x.a.example.com")
	if got := testutil.ToFloat64(namesRefused.WithLabelValues("NamespaceNotAllowed")) - notAllowed; got != 0 {
		t.Errorf("names refused NamespaceNotAllowed once unwanted: %v more, want 0", got)
	}
}

// TestDomainFilterIsTheFlagProvidersFilter: --domain-filter=example.org
// (the platform's, for its provider declared by flags) leaves out a name
// of another domain for that provider, as ever; a team's DNSProvider is
// filtered by its own domains, not by it.
func TestDomainFilterIsTheFlagProvidersFilter(t *testing.T) {
	g := newProviders(t, Config{Domains: domains.Settings{Include: []string{"example.org"}}})
	g.list("flags", nil, "example.org", "example.net")
	g.list("a/dns", declared("a", "a"), "team.example.net")
	g.want("a", "www.example.net", "192.0.2.1")
	g.expect("outside the domain filter: not for the flags' provider")
	g.want("a", "www.team.example.net", "192.0.2.2")
	g.expect("a DNSProvider's name", "a/dns create A www.team.example.net 192.0.2.2", "a/dns create TXT a-www.team.example.net")
	g.want("a", "www.example.org", "192.0.2.3")
	g.expect("inside the filter", "flags create A www.example.org 192.0.2.3", "flags create TXT a-www.example.org")
}

// TestTieIsPlannedNowhereAndDeletesNothing: two DNSProviders serving one
// zone equally hold our records at a name that is wanted elsewhere: the
// tie is refused, and neither provider's records are changed or deleted.
func TestTieIsPlannedNowhereAndDeletesNothing(t *testing.T) {
	g := newProviders(t, Config{})
	ties := testutil.ToFloat64(namesRefused.WithLabelValues("ProviderTie"))
	g.list("a/dns", declared("a", events.AllNamespaces), "tie.example.com")
	g.list("b/dns", declared("b", events.AllNamespaces), "tie.example.com")
	g.hold("a/dns", "tie.example.com", "www.tie.example.com", "192.0.2.8")
	g.hold("b/dns", "tie.example.com", "www.tie.example.com", "192.0.2.9")
	g.want("a", "www.tie.example.com", "192.0.2.1")
	g.want("a", "new.tie.example.com", "192.0.2.2")
	g.expect("a tie")
	if got := testutil.ToFloat64(namesRefused.WithLabelValues("ProviderTie")) - ties; got != 2 {
		t.Errorf("names refused ProviderTie: %v more, want 2", got)
	}

	// b/dns narrows its domains: a/dns alone serves the zone, and the
	// names are re-planned at once (the zone list marks them).
	b := declared("b", events.AllNamespaces)
	b.Domains = []string{"other.tie.example.com"}
	g.list("b/dns", b, "tie.example.com")
	g.expect("a/dns alone", "a/dns create A new.tie.example.com 192.0.2.2", "a/dns create TXT a-new.tie.example.com",
		"a/dns update A www.tie.example.com 192.0.2.1")
}

// TestDeclaredProviderNotListedYetHoldsItsNames: a DNSProvider whose zones
// are not listed yet claims its domains: its names wait for it rather than
// go to the flags' parent zone, and are planned into it once it lists.
func TestDeclaredProviderNotListedYetHoldsItsNames(t *testing.T) {
	g := newProviders(t, Config{})
	g.list("flags", nil, "example.com")
	a := declared("a", "a")
	a.Domains = []string{"a.example.com"}
	g.list("a/dns", a)
	g.want("a", "www.a.example.com", "192.0.2.1")
	g.expect("waiting for a/dns' zones")
	g.list("a/dns", a, "a.example.com")
	g.expect("a/dns listed its zone", "a/dns create A www.a.example.com 192.0.2.1", "a/dns create TXT a-www.a.example.com")
}

// TestRetiringProviderLosesItsRecordsThroughTheGuard: a DNSProvider being
// deleted with its records (deletionPolicy Delete): its records of ours
// are planned to go, wanted or not, nothing new goes into it, and a large
// retirement is held by the mass-delete guard like any mass delete.
func TestRetiringProviderLosesItsRecordsThroughTheGuard(t *testing.T) {
	g := newProviders(t, Config{MaxDeletes: 5, MaxDeletesPercent: 50})
	small, big := declared("s", "s"), declared("b", "b")
	g.list("s/dns", small, "s.example.com")
	g.list("b/dns", big, "b.example.com")
	for i, n := range []string{"one", "two"} {
		name := n + ".s.example.com"
		g.hold("s/dns", "s.example.com", name, svcIP(i))
		g.want("s", name, svcIP(i))
	}
	var bigNames []string
	for i := range 6 {
		name := strings.TrimSuffix(svcName(i), zone) + "b.example.com"
		bigNames = append(bigNames, name)
		g.hold("b/dns", "b.example.com", name, svcIP(i))
		g.want("b", name, svcIP(i))
	}
	g.expect("in sync")

	retiring := func(s *events.ProviderScope) *events.ProviderScope {
		r := *s
		r.Retiring = true
		return &r
	}
	g.list("s/dns", retiring(small), "s.example.com")
	g.list("b/dns", retiring(big), "b.example.com")
	g.want("s", "new.s.example.com", "192.0.2.99")
	g.expect("retiring: their records go, none is created, the big one held",
		"s/dns delete A one.s.example.com", "s/dns delete A two.s.example.com",
		"s/dns delete TXT a-one.s.example.com", "s/dns delete TXT a-two.s.example.com")

	ctx := context.Background()
	st, err := g.js.Stream(ctx, events.StreamHeld)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, events.HeldSubject("b/dns", "b.example.com"))
	if err != nil {
		t.Fatalf("no held deletes for the big retirement: %v", err)
	}
	var h events.HeldDeletes
	if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &h); err != nil {
		t.Fatal(err)
	}
	if h.Deletes != len(bigNames) {
		t.Fatalf("held %d deletes, want %d", h.Deletes, len(bigNames))
	}
}

// TestRunPlansByRouting: the same through Run, fed by the streams: zone
// lists of a DNSProvider and of a provider declared by flags, and desired
// states of objects of two namespaces.
func TestRunPlansByRouting(t *testing.T) {
	nc, js := startBus(t)
	publish(t, js, events.ZonesSubject("a/dns"), &events.ZoneList{Provider: "a/dns", Zones: []string{"a.example.com"},
		Scope: declared("a", "a")})
	publish(t, js, events.ZonesSubject("flags"), &events.ZoneList{Provider: "flags", Zones: []string{"example.com"}})
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	wantedBy := func(ns, name, ip string) {
		publish(t, js, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints:    []events.Endpoint{rr(name, "A", 0, ip)},
			Contributors: []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: ns, Name: "web"}}})
	}
	wantedBy("b", "x.a.example.com", "192.0.2.1")   // a/dns does not serve b: nowhere
	wantedBy("a", "www.a.example.com", "192.0.2.2") // a/dns alone
	wantedBy("b", "www.example.com", "192.0.2.3")   // the flags' provider
	got := map[string]bool{}
	for len(got) < 2 {
		p := nextPlan(t, sub)
		for _, c := range p.Changes {
			if k := c.Key(); k.RecordType == events.RecordTypeA {
				got[p.Provider+" "+k.DNSName] = true
			}
		}
	}
	want := map[string]bool{"a/dns www.a.example.com": true, "flags www.example.com": true}
	if len(got) != len(want) || !got["a/dns www.a.example.com"] || !got["flags www.example.com"] {
		t.Fatalf("planned %v, want %v", got, want)
	}
}

// TestHeldDeletesOfANameWantedElsewhereAreDropped: the guard holds the
// deletes of names nobody wanted; they are wanted again, by a namespace
// whose DNSProvider now serves them: they are created there, and the old
// provider's held deletes are dropped, not left for an operator to
// approve.
func TestHeldDeletesOfANameWantedElsewhereAreDropped(t *testing.T) {
	g := newProviders(t, Config{MaxDeletes: 1})
	g.list("flags", nil, "example.com")
	g.hold("flags", "example.com", "x1.a.example.com", "192.0.2.1")
	g.hold("flags", "example.com", "x2.a.example.com", "192.0.2.2")
	g.expect("unwanted: the deletes are held")
	if h := g.heldAt("flags", "example.com"); h.Deletes != 2 {
		t.Fatalf("held %d deletes, want 2", h.Deletes)
	}
	g.list("a/dns", declared("a", "a"), "a.example.com")
	g.want("a", "x1.a.example.com", "192.0.2.1")
	g.want("a", "x2.a.example.com", "192.0.2.2")
	g.expect("wanted at a/dns", "a/dns create A x1.a.example.com 192.0.2.1", "a/dns create A x2.a.example.com 192.0.2.2",
		"a/dns create TXT a-x1.a.example.com", "a/dns create TXT a-x2.a.example.com")
	if h := g.heldAt("flags", "example.com"); h.ID != "" || h.Deletes != 0 {
		t.Fatalf("the flags' provider still holds %d deletes (%s)", h.Deletes, h.ID)
	}
}

// heldAt is what the bus says provider holds in zone.
func (g *providers) heldAt(provider, zone string) events.HeldDeletes {
	g.t.Helper()
	ctx := context.Background()
	var h events.HeldDeletes
	st, err := g.js.Stream(ctx, events.StreamHeld)
	if err != nil {
		g.t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, events.HeldSubject(provider, zone))
	if err != nil {
		g.t.Fatalf("nothing said of %s %s's held deletes: %v", provider, zone, err)
	}
	if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &h); err != nil {
		g.t.Fatal(err)
	}
	return h
}
