package pdns_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// TestListingAtRest proves, against a real PowerDNS, that listing an
// unchanged zone does not download it, that an out-of-band edit through the
// API is still in the next listing, and that every Nth listing downloads
// the zone whatever its serial.
func TestListingAtRest(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	p := newProvider(t, s, func(c *pdns.Config) { c.FullListingEvery = 4 })
	list := func() []events.Endpoint {
		t.Helper()
		eps, err := p.Records(t.Context(), zone)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	targets := func(eps []events.Endpoint, name, typ string) []string {
		for _, e := range eps {
			if e.DNSName == name && e.RecordType == typ {
				return e.Targets
			}
		}
		return nil
	}
	if err := s.Plant(zone, "www.example.org", "A", 300, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	first := list()
	if got := p.Downloads(); got != 1 {
		t.Fatalf("first listing: %d downloads, want 1", got)
	}
	second := list()
	if got := p.Downloads(); got != 1 {
		t.Fatalf("unchanged zone listed again: %d downloads, want still 1", got)
	}
	same := func(a, b events.Endpoint) bool { return a.Key() == b.Key() && slices.Equal(a.Targets, b.Targets) }
	if !slices.EqualFunc(first, second, same) {
		t.Fatalf("listing from the last download differs:\n%v\n%v", first, second)
	}

	if err := s.Plant(zone, "www.example.org", "A", 300, "192.0.2.2"); err != nil {
		t.Fatal(err)
	}
	third := list()
	if got := targets(third, "www.example.org", "A"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("out-of-band change not seen: www A %v", got)
	}
	if got := p.Downloads(); got != 2 {
		t.Fatalf("changed zone: %d downloads, want 2", got)
	}
	if got := list(); !slices.EqualFunc(got, third, same) || p.Downloads() != 2 {
		t.Fatalf("unchanged again: %d downloads, listing %v", p.Downloads(), got)
	}
	list()
	list()
	if got := p.Downloads(); got != 2 {
		t.Fatalf("3 listings of an unchanged zone: %d downloads, want still 2", got)
	}
	list() // the 4th listing since the last download: a full one
	if got := p.Downloads(); got != 3 {
		t.Fatalf("safety net: %d downloads, want 3", got)
	}
}

// bigPlan is n changes of zone's names big-<i>, each from old (nil: a
// create) to an A record of target: more names than are read one by one.
func bigPlan(zone string, n int, old, target string) ([]events.Change, []string) {
	var changes []events.Change
	var names []string
	for i := range n {
		name := fmt.Sprintf("big-%d.%s", i, zone)
		c := events.Change{New: ep(name, "A", 300, target)}
		if old != "" {
			c.Old = ep(name, "A", 300, old)
		}
		changes = append(changes, c)
		names = append(names, name)
	}
	return changes, names
}

// TestLargePlansFromTheCopy proves, against a real PowerDNS, that a plan
// too large to read name by name checks its preconditions and is read back
// from the provider's copy of the zone, without downloading it, while the
// zone's serial says it is the only writer; that the copy then holds
// exactly what a fresh download holds; and that another writer's edit in
// between is seen: the next plan downloads, and a plan made stale by the
// edit writes nothing.
func TestLargePlansFromTheCopy(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	p := newProvider(t, s, nil)
	ctx := t.Context()
	if _, err := p.Records(ctx, zone); err != nil {
		t.Fatal(err)
	}
	agrees := func(names []string) {
		t.Helper()
		got, err := p.RecordsAt(ctx, zone, names)
		if err != nil {
			t.Fatal(err)
		}
		all, err := newProvider(t, s, nil).Records(ctx, zone)
		if err != nil {
			t.Fatal(err)
		}
		if want := provider.AtNames(all, names); !reflect.DeepEqual(got, want) {
			t.Fatalf("read back from the copy:\n%v\na fresh download holds:\n%v", got, want)
		}
	}

	creates, names := bigPlan(zone, 100, "", "192.0.2.1")
	if err := p.Apply(ctx, zone, creates); err != nil {
		t.Fatal(err)
	}
	agrees(names)
	// The update's preconditions hold only if the copy has the creates.
	updates, _ := bigPlan(zone, 100, "192.0.2.1", "192.0.2.2")
	if err := p.Apply(ctx, zone, updates); err != nil {
		t.Fatal(err)
	}
	agrees(names)
	if got := p.Downloads(); got != 1 {
		t.Fatalf("two plans of 100 names and their read-backs: %d downloads, want 1 (the first listing)", got)
	}

	// Another writer: the copy is out of date, a plan made before the edit
	// is stale and writes nothing.
	if err := s.Plant(zone, "big-7."+zone, "A", 300, "198.51.100.7"); err != nil {
		t.Fatal(err)
	}
	stale, _ := bigPlan(zone, 100, "192.0.2.2", "192.0.2.3")
	if err := p.Apply(ctx, zone, stale); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("plan made stale by another writer: %v, want ErrStale", err)
	}
	if got := p.Downloads(); got != 2 {
		t.Fatalf("after another writer's edit: %d downloads, want 2", got)
	}
	agrees(names)
	if rrs, err := s.Query("big-8."+zone, dns.TypeA); err != nil || len(rrs) != 1 || rrs[0].(*dns.A).A.String() != "192.0.2.2" {
		t.Fatalf("the stale plan wrote: big-8 A %v %v", rrs, err)
	}
}

// TestReadBackWhenTheSerialStandsStill: in a zone whose serial the API
// leaves alone (no SOA-EDIT-API), the serial cannot tell a plan's own
// write from no write, so a plan's read-back downloads the zone rather
// than answer from the copy it made before.
func TestReadBackWhenTheSerialStandsStill(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	if err := s.SetSOAEditAPI(zone, ""); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, s, nil)
	ctx := t.Context()
	if _, err := p.Records(ctx, zone); err != nil {
		t.Fatal(err)
	}
	creates, names := bigPlan(zone, 100, "", "192.0.2.1")
	if err := p.Apply(ctx, zone, creates); err != nil {
		t.Fatal(err)
	}
	got, err := p.RecordsAt(ctx, zone, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("read back %d RRsets after creating 100", len(got))
	}
}
