package rfc2136_test

import (
	"context"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestListingAtRest proves, against a real BIND, that listing an unchanged
// zone transfers nothing in full, that an out-of-band edit (a dynamic
// update from another client) is still in the next listing, and that every
// Nth listing is a full AXFR.
func TestListingAtRest(t *testing.T) {
	s := bind.StartT(t, "example.org")
	ctx := context.Background()
	p := newProvider(t, s, func(c *rfc2136.Config) { c.FullTransferEvery = 4 })
	other := provider.Checked(newProvider(t, s, nil)) // the out-of-band editor
	if err := other.Apply(ctx, "example.org", []events.Change{{New: ep("www.example.org", "A", 300, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	list := func() []events.Endpoint {
		t.Helper()
		eps, err := p.Records(ctx, "example.org")
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

	first := list() // no copy yet: AXFR
	if got := p.AXFRs(); got != 1 {
		t.Fatalf("first listing: %d AXFRs, want 1", got)
	}
	second := list()
	if got := p.AXFRs(); got != 1 {
		t.Fatalf("unchanged zone listed again: %d AXFRs, want still 1", got)
	}
	if !slices.EqualFunc(first, second, func(a, b events.Endpoint) bool { return a.Key() == b.Key() && slices.Equal(a.Targets, b.Targets) }) {
		t.Fatalf("listing from the copy differs:\n%v\n%v", first, second)
	}
	mutated := second[0]
	want := slices.Clone(mutated.Targets)
	second[0].Targets[0] = "mutated" // the caller's copy, not the cache

	if err := other.Apply(ctx, "example.org", []events.Change{
		{Old: ep("www.example.org", "A", 300, "192.0.2.1"), New: ep("www.example.org", "A", 300, "192.0.2.2")},
		{New: ep("new.example.org", "TXT", 300, "out of band")},
	}); err != nil {
		t.Fatal(err)
	}
	third := list()
	if got := targets(third, "www.example.org", "A"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("out-of-band change not seen: www A %v", got)
	}
	if got := targets(third, "new.example.org", "TXT"); !slices.Equal(got, []string{"out of band"}) {
		t.Fatalf("out-of-band addition not seen: %v", got)
	}
	if got := p.AXFRs(); got != 1 {
		t.Fatalf("a changed zone was transferred in full (%d AXFRs); IXFR brings the change", got)
	}
	if got := targets(list(), mutated.DNSName, mutated.RecordType); !slices.Equal(got, want) {
		t.Fatalf("the cached listing was changed by a caller: %s %s %v, want %v", mutated.DNSName, mutated.RecordType, got, want)
	}
	list() // the 4th listing since the AXFR: a full one again
	if got := p.AXFRs(); got != 2 {
		t.Fatalf("safety net: %d AXFRs after 4 listings, want 2", got)
	}
}
