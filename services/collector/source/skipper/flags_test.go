package skipper

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector/source/internal/flagtest"
)

// --skipper-routegroup-groupversion defaults to ExternalDNS' default, and
// a value that is not group/version is refused at start.
func TestFlags(t *testing.T) {
	flagtest.Check(t, []flagtest.Case[Flags]{
		{Args: nil, Want: Flags{GroupVersion: "zalando.org/v1"}},
		{Args: []string{"--skipper-routegroup-groupversion=zalando.org/v2"}, Want: Flags{GroupVersion: "zalando.org/v2"}},
	})
	for _, bad := range []string{"zalando.org", "/v1", "zalando.org/", "a/b/c"} {
		if _, err := parseGroupVersion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if gv, err := parseGroupVersion(""); err != nil || gv.String() != DefaultGroupVersion {
		t.Errorf("empty: %v, %v", gv, err)
	}
}
