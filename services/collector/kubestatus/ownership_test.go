package kubestatus

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry/registrytest"
)

// The status writer reads every string of the registry's table as the
// registry does: without the key, an encrypted string may be anyone's.
func TestReadsTheRegistryTableAsTheRegistryDoes(t *testing.T) {
	for _, c := range registrytest.Strings() {
		r := events.NewEndpoint("a-www.example.org", events.RecordTypeTXT, 300, c.TXT)
		owner, ok := ownerOf(r)
		if wantOwner, wantOK := c.Owner(); owner != wantOwner || ok != wantOK {
			t.Errorf("ownerOf(%q) = %q %v, want %q %v", c.TXT, owner, ok, wantOwner, wantOK)
		}
		if got := registryResource(c.TXT); !c.Encrypted && got != c.Labels.Resource {
			t.Errorf("registryResource(%q) = %q, want %q", c.TXT, got, c.Labels.Resource)
		}
	}
}
