package pdns_test

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// TestReadBackNames reads back a few names (one GET per name) and many
// (one GET of the zone) after changes by zonestream and by hand: both must
// agree with a full listing, name by name.
func TestReadBackNames(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	p := newProvider(t, s, nil)
	var changes []events.Change
	var names []string
	for i := range 12 {
		name := fmt.Sprintf("n%d.example.org", i)
		names = append(names, name)
		changes = append(changes, events.Change{New: ep(name, "A", 0, fmt.Sprintf("192.0.2.%d", i+1))})
	}
	changes = append(changes, events.Change{New: ep("n0.example.org", "TXT", 0, "owned")})
	if err := p.Apply(t.Context(), zone, changes); err != nil {
		t.Fatal(err)
	}
	if err := s.Plant(zone, "n1.example.org", "MX", 300, "10 mail.example.org."); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(zone, "n2.example.org", "A"); err != nil {
		t.Fatal(err)
	}
	few := append(names[:3:3], "nothing.example.org")
	if got := providertest.ReadBackAgrees(t, p, zone, few, p.RecordsAt); len(got) != 4 {
		t.Fatalf("read back %v, want n0 A and TXT, n1 A and MX", got)
	}
	if got := providertest.ReadBackAgrees(t, p, zone, names, p.RecordsAt); len(got) != 13 {
		t.Fatalf("read back %d RRsets, want 13", len(got))
	}
}
