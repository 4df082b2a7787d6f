package projection

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/registry/registrytest"
)

// The portal reads every string of the registry's table as the registry
// does: without the key, an encrypted string may be anyone's.
func TestReadsTheRegistryTableAsTheRegistryDoes(t *testing.T) {
	for _, c := range registrytest.Strings() {
		r := events.NewEndpoint("a-www.example.org", events.RecordTypeTXT, 300, c.TXT)
		var want []string
		if owner, ok := c.Owner(); ok {
			want = []string{owner}
		}
		if got := recordOwners(r); !slices.Equal(got, want) {
			t.Errorf("recordOwners(%q) = %q, want %q", c.TXT, got, want)
		}
	}
}

// Ownership records are looked for where the planner's settings put them.
func TestOwnershipRecordsAreLookedForWhereTheSettingsPutThem(t *testing.T) {
	p := New(Options{Ownership: registry.Settings{OwnerID: "us", Prefix: "txt."}})
	got := p.registryNames("www.example.org")
	for _, want := range []string{"txt.www.example.org", "txt.a-www.example.org", "txt.cname-www.example.org"} {
		if !slices.Contains(got, want) {
			t.Errorf("registryNames = %q, lacks %q", got, want)
		}
	}
}
