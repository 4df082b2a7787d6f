package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
)

func withSet(ep events.Endpoint, set string) events.Endpoint {
	ep.SetIdentifier = set
	return ep
}

// setLines renders changes as "delete A www [eu]" lines, sorted.
func setLines(cs []events.Change) []string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, describe([]events.Change{c})+" ["+c.Key().SetIdentifier+"]")
	}
	slices.Sort(lines)
	return lines
}

// TestSetIdentifiersAreSeparateRRsets: two routing-policy RRsets at one
// name (set identifiers "us" and "eu") are two RRsets, each with its own
// ownership record (same set identifier, as ExternalDNS writes it):
// deleting one leaves the other as it is.
func TestSetIdentifiersAreSeparateRRsets(t *testing.T) {
	nc, js := startBus(t)
	www := "www." + zone
	res := "service/default/web"
	held(t, js,
		withSet(rr(www, "A", 300, "192.0.2.1"), "us"), withSet(rr(www, "A", 300, "192.0.2.2"), "eu"),
		withSet(rr("a-"+www, "TXT", 300, owned("me", res)), "us"), withSet(rr("a-"+www, "TXT", 300, owned("me", res)), "eu"))
	zones(t, js, zone)
	wanted(t, js, withSet(rr(www, "A", 0, "192.0.2.1"), "us"))
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	publishComplete(t, js)

	got := setLines(nextPlan(t, sub).Changes)
	want := []string{"delete A www [eu]", "delete TXT a-www [eu]"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSetIdentifiersAreCreatedApart: both sets wanted at an empty name
// get a record and an ownership record each.
func TestSetIdentifiersAreCreatedApart(t *testing.T) {
	www := "www." + zone
	np := planWith(testRegistry(txtRegistry{}), PolicySync, www,
		[]events.Endpoint{withSet(rr(www, "A", 0, "192.0.2.1"), "us"), withSet(rr(www, "A", 0, "192.0.2.2"), "eu")}, nil)
	got := setLines(np.changes)
	res := owned("me", "service/default/web")
	want := []string{"create A www 192.0.2.1 [us]", "create A www 192.0.2.2 [eu]",
		"create TXT a-www " + res + " [eu]", "create TXT a-www " + res + " [us]"}
	if !slices.Equal(got, want) {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
