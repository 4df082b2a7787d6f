package pod

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector/source/internal/flagtest"
)

func TestFlags(t *testing.T) {
	flagtest.Check(t, []flagtest.Case[Flags]{
		{Args: nil, Want: Flags{}},
		{Args: []string{"--ignore-non-host-network-pods=false"}, Want: Flags{IncludeNonHostNetworkPods: true}},
		{Args: []string{"--ignore-non-host-network-pods", "--pod-source-domain", "pods.example.org"}, Want: Flags{SourceDomain: "pods.example.org"}},
	})
	if _, err := New(Options{Flags: Flags{SourceDomain: "bad..domain"}}); err == nil {
		t.Error("invalid --pod-source-domain accepted")
	}
}
