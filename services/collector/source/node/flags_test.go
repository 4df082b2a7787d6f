package node

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector/source/internal/flagtest"
)

// The ExternalDNS spellings of the flags set the inverted fields.
func TestFlags(t *testing.T) {
	flagtest.Check(t, []flagtest.Case[Flags]{
		{Args: nil, Want: Flags{}},
		{Args: []string{"--exclude-unschedulable=false"}, Want: Flags{IncludeUnschedulable: true}},
		{Args: []string{"--exclude-unschedulable"}, Want: Flags{}},
		{Args: []string{"--no-exclude-unschedulable"}, Want: Flags{IncludeUnschedulable: true}},
		{Args: []string{"--expose-internal-ipv6=false"}, Want: Flags{}},
		{Args: []string{"--expose-internal-ipv6"}, Want: Flags{ExposeInternalIPv6: true}},
	})
	if _, err := flagtest.Parse[Flags]([]string{"--exclude-unschedulable=maybe"}); err == nil {
		t.Error("--exclude-unschedulable=maybe accepted")
	}
}
