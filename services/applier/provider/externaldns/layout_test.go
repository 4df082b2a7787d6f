package externaldns

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
)

// TXT targets: listed quoted (Route53) or bare (rfc2136), they read as the
// raw value; new ones go out quoted as ExternalDNS' registry writes them;
// old ones go back exactly as listed.
func TestTXTTargetsBothWays(t *testing.T) {
	var tt txtTargets
	long := strings.Repeat("x", 300)
	listed := tt.fromProvider([]*endpoint.Endpoint{
		endpoint.NewEndpoint("a-web.example.org", "TXT", `"heritage=external-dns,external-dns/owner=default"`),
		endpoint.NewEndpoint("bare.example.org", "TXT", `say \"hi\"`),
		endpoint.NewEndpoint("long.example.org", "TXT", `"`+long[:255]+`" "`+long[255:]+`"`),
		endpoint.NewEndpoint("odd.example.org", "TXT", `"a" "b"`),
		endpoint.NewEndpoint("web.example.org", "A", "192.0.2.1"),
	})
	want := [][]string{{"heritage=external-dns,external-dns/owner=default"}, {`say "hi"`}, {long}, {"ab"}, {"192.0.2.1"}}
	for i, ep := range listed {
		if !slices.Equal(ep.Targets, want[i]) {
			t.Errorf("%s: %q, want %q", ep.DNSName, ep.Targets, want[i])
		}
	}
	prefix := `v "q" \ `
	n := 255 - len(prefix) // the first character-string's share of long
	ch := &plan.Changes{
		Create:    []*endpoint.Endpoint{endpoint.NewEndpoint("new.example.org", "TXT", prefix+long)},
		UpdateOld: []*endpoint.Endpoint{endpoint.NewEndpoint("odd.example.org", "TXT", "ab")},
		UpdateNew: []*endpoint.Endpoint{endpoint.NewEndpoint("odd.example.org", "TXT", "cd")},
		Delete:    []*endpoint.Endpoint{endpoint.NewEndpoint("a-web.example.org", "TXT", "heritage=external-dns,external-dns/owner=default")},
	}
	tt.toProvider(ch)
	if got, w := ch.Create[0].Targets[0], `"v \"q\" \\ `+long[:n]+`" "`+long[n:]+`"`; got != w {
		t.Errorf("create: %s\nwant %s", got, w)
	}
	if got := ch.UpdateOld[0].Targets; !slices.Equal(got, []string{`"a" "b"`}) {
		t.Errorf("update old, as listed: %q", got)
	}
	if got := ch.UpdateNew[0].Targets; !slices.Equal(got, []string{`"cd"`}) {
		t.Errorf("update new: %q", got)
	}
	if got := ch.Delete[0].Targets; !slices.Equal(got, []string{`"heritage=external-dns,external-dns/owner=default"`}) {
		t.Errorf("delete, as listed: %q", got)
	}
}

// A provider that reads targets as zone-file text (rfc2136) gets a bare
// listed TXT back quoted, so that a blank in it does not split it.
func TestTXTOldTargetsQuotedForZoneText(t *testing.T) {
	tt := txtTargets{zoneText: true}
	tt.fromProvider([]*endpoint.Endpoint{endpoint.NewEndpoint("bare.example.org", "TXT", `say \"hi\"`)})
	ch := &plan.Changes{Delete: []*endpoint.Endpoint{endpoint.NewEndpoint("bare.example.org", "TXT", `say "hi"`)}}
	tt.toProvider(ch)
	if got := ch.Delete[0].Targets; !slices.Equal(got, []string{`"say \"hi\""`}) {
		t.Errorf("delete: %q", got)
	}
}
