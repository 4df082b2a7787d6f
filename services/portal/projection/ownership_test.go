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
	registrytest.CheckOwners(t, "recordOwners", func(r events.Endpoint) (string, bool) {
		owners := recordOwners(r)
		if len(owners) > 1 {
			t.Errorf("recordOwners(%q) = %q: one string, one owner", r.Targets, owners)
		}
		if len(owners) == 0 {
			return "", false
		}
		return owners[0], true
	})
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
