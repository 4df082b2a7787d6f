package planner

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

func quotaScope(ns string, quota int) *events.ProviderScope {
	s := declared(ns, events.AllNamespaces)
	s.Quota = quota
	return s
}

// TestQuotaAdmitsNewNamesInOrderUntilADeleteFreesRoom: quota 2, three
// new names: the first two in name order are planned, the third is
// counted over the quota; once one of the two is unwanted and its records
// are gone, the third is planned.
func TestQuotaAdmitsNewNamesInOrderUntilADeleteFreesRoom(t *testing.T) {
	g := newProviders(t, Config{})
	g.list("q/dns", quotaScope("q", 2), "q.example.com")
	over := func() float64 { return testutil.ToFloat64(namesOverQuota.WithLabelValues("q/dns")) }
	g.want("q", "n1.q.example.com", "192.0.2.1")
	g.want("q", "n2.q.example.com", "192.0.2.2")
	g.want("q", "n3.q.example.com", "192.0.2.3")
	g.expect("three new names, quota 2", "q/dns create A n1.q.example.com 192.0.2.1", "q/dns create A n2.q.example.com 192.0.2.2",
		"q/dns create TXT a-n1.q.example.com", "q/dns create TXT a-n2.q.example.com")
	if over() != 1 {
		t.Fatalf("names over quota: %v, want 1", over())
	}
	// The applier applied them.
	g.hold("q/dns", "q.example.com", "n1.q.example.com", "192.0.2.1")
	g.hold("q/dns", "q.example.com", "n2.q.example.com", "192.0.2.2")
	g.expect("in sync, n3 still over")

	g.want("q", "n1.q.example.com", "")
	g.expect("n1 unwanted: deleted; its records still count until gone", "q/dns delete A n1.q.example.com",
		"q/dns delete TXT a-n1.q.example.com")
	if over() != 1 {
		t.Fatalf("names over quota before the delete is seen: %v, want 1", over())
	}
	g.hold("q/dns", "q.example.com", "n1.q.example.com", "")
	g.expect("n1 gone: room for n3", "q/dns create A n3.q.example.com 192.0.2.3", "q/dns create TXT a-n3.q.example.com")
	if over() != 0 {
		t.Fatalf("names over quota: %v, want 0", over())
	}
}

// TestQuotaNeverRefusesANameHeld: a provider holding more of our names
// than its quota (lowered since) still gets their updates; only a new
// name is refused.
func TestQuotaNeverRefusesANameHeld(t *testing.T) {
	g := newProviders(t, Config{})
	g.list("q/dns", quotaScope("q", 1), "q.example.com")
	for i, n := range []string{"h1", "h2"} {
		name := n + ".q.example.com"
		g.hold("q/dns", "q.example.com", name, svcIP(i))
		g.want("q", name, "192.0.2.50")
	}
	g.want("q", "new.q.example.com", "192.0.2.60")
	g.expect("held names updated, the new one refused",
		"q/dns update A h1.q.example.com 192.0.2.50", "q/dns update A h2.q.example.com 192.0.2.50")
	g.hold("q/dns", "q.example.com", "h1.q.example.com", "192.0.2.50")
	g.hold("q/dns", "q.example.com", "h2.q.example.com", "192.0.2.50")

	// Records another owner holds are not ours: they do not count.
	if g.s.holdsForUs("q/dns", "q.example.com", "new.q.example.com") {
		t.Fatal("a name with no records counted as held")
	}
	feed(t, g.s, events.ObservedSubject("q/dns", "x.q.example.com"), &events.ObservedState{Provider: "q/dns", Zone: "q.example.com",
		DNSName: "x.q.example.com", Records: []events.Endpoint{rr("x.q.example.com", "A", 300, "192.0.2.7")}})
	feed(t, g.s, events.ObservedSubject("q/dns", "a-x.q.example.com"), &events.ObservedState{Provider: "q/dns", Zone: "q.example.com",
		DNSName: "a-x.q.example.com", Records: []events.Endpoint{rr("a-x.q.example.com", "TXT", 300, owned("them", ""))}})
	if g.s.holdsForUs("q/dns", "q.example.com", "x.q.example.com") {
		t.Fatal("another owner's records counted against our quota")
	}
	if !g.s.holdsForUs("q/dns", "q.example.com", "h1.q.example.com") {
		t.Fatal("our records not counted against the quota")
	}

	// Both held names unwanted: deleted; once their records are seen
	// gone, the provider has room for the new one.
	g.want("q", "h1.q.example.com", "")
	g.want("q", "h2.q.example.com", "")
	g.expect("held names unwanted", "q/dns delete A h1.q.example.com", "q/dns delete A h2.q.example.com",
		"q/dns delete TXT a-h1.q.example.com", "q/dns delete TXT a-h2.q.example.com")
	g.hold("q/dns", "q.example.com", "h1.q.example.com", "")
	g.expect("one gone: still full")
	g.hold("q/dns", "q.example.com", "h2.q.example.com", "")
	g.expect("both gone", "q/dns create A new.q.example.com 192.0.2.60", "q/dns create TXT a-new.q.example.com")
}

// TestQuotaLiftedPlansTheNamesOverIt: a quota raised to none plans the
// names refused over it.
func TestQuotaLiftedPlansTheNamesOverIt(t *testing.T) {
	g := newProviders(t, Config{})
	g.list("q/dns", quotaScope("q", 1), "q.example.com")
	g.want("q", "n1.q.example.com", "192.0.2.1")
	g.want("q", "n2.q.example.com", "192.0.2.2")
	g.expect("quota 1", "q/dns create A n1.q.example.com 192.0.2.1", "q/dns create TXT a-n1.q.example.com")
	g.list("q/dns", quotaScope("q", 0), "q.example.com")
	g.expect("no quota", "q/dns create A n1.q.example.com 192.0.2.1", "q/dns create A n2.q.example.com 192.0.2.2",
		"q/dns create TXT a-n1.q.example.com", "q/dns create TXT a-n2.q.example.com")
	if got := testutil.ToFloat64(namesOverQuota.WithLabelValues("q/dns")); got != 0 {
		t.Fatalf("names over quota: %v, want 0", got)
	}
}
