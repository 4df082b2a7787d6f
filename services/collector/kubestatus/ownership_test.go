package kubestatus

import (
	"testing"

	"github.com/zonestream/zonestream/events/registry/registrytest"
)

// The status writer reads every string of the registry's table as the
// registry does: without the key, an encrypted string may be anyone's.
func TestReadsTheRegistryTableAsTheRegistryDoes(t *testing.T) {
	registrytest.CheckOwners(t, "ownerOf", ownerOf)
	for _, c := range registrytest.Strings() {
		if got := registryResource(c.TXT); !c.Encrypted && got != c.Labels.Resource {
			t.Errorf("registryResource(%q) = %q, want %q", c.TXT, got, c.Labels.Resource)
		}
	}
}
