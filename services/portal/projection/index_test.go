package projection

import (
	"maps"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// TestIndexFollowsEveryView: the counts and the periodic look come from
// the index, not from a walk of every view, so after each step the index
// must say what a walk says: pending turning into not in sync with time,
// a name nobody wants any more dropped once its tombstone expired.
func TestIndexFollowsEveryView(t *testing.T) {
	const zone = "t.example"
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	p := New(Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "us"}})
	p.now = func() time.Time { return now }
	take := feeder(t, func() time.Time { return now })
	want := func(name string, eps ...events.Endpoint) {
		take(p.ApplyDesired, events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: eps})
	}
	hold := func(name string, eps ...events.Endpoint) {
		take(p.ApplyObserved, events.ObservedSubject("bind", name),
			&events.ObservedState{Provider: "bind", Zone: zone, DNSName: name, Records: eps})
	}
	agrees := func(step string, counts map[Status]int) {
		t.Helper()
		_, walked := p.List(Filter{})
		if got := p.Counts(); !maps.Equal(got, walked) || !maps.Equal(got, counts) {
			t.Fatalf("%s: counts %v, a walk of the views %v, want %v", step, got, walked, counts)
		}
	}
	a := events.NewEndpoint("a."+zone, events.RecordTypeA, 300, "192.0.2.1")
	owned := events.NewEndpoint("a-a."+zone, events.RecordTypeTXT, 300, "heritage=external-dns,external-dns/owner=us,external-dns/resource=service/default/a")
	b := events.NewEndpoint("b."+zone, events.RecordTypeA, 300, "192.0.2.2")
	c := events.NewEndpoint("c."+zone, events.RecordTypeA, 300, "192.0.2.3")

	take(p.ApplyObserved, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}})
	want(a.DNSName, a)
	hold(a.DNSName, a)
	hold(owned.DNSName, owned)
	want(b.DNSName, b)
	want(c.DNSName, c)
	hold(c.DNSName, c)
	agrees("wanted", map[Status]int{InSync: 2, Pending: 1})

	// c is given up: nothing wanted, then nothing held.
	want(c.DNSName)
	hold(c.DNSName)
	p.Reevaluate()
	if _, ok := p.Get(c.DNSName); !ok {
		t.Fatal("c dropped before its tombstone expired")
	}

	now = now.Add(2 * time.Minute)
	p.Reevaluate()
	agrees("after the grace", map[Status]int{InSync: 2, NotInSync: 1})

	now = now.Add(events.TombstoneTTL)
	p.Reevaluate()
	if _, ok := p.Get(c.DNSName); ok {
		t.Fatal("c kept after its tombstone expired")
	}
	agrees("after the tombstone", map[Status]int{InSync: 1, NotInSync: 1})

	hold(b.DNSName, b)
	agrees("b held", map[Status]int{InSync: 2})
	if len(p.index.pending) != 0 || len(p.index.emptied) != 0 {
		t.Fatalf("%d pending and %d emptied views left in the index, want none", len(p.index.pending), len(p.index.emptied))
	}
}
