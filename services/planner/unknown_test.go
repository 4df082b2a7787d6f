package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// TestUnreadableDesiredStateIsUnknownNotNothingWanted: the last message on
// a name's desired subject is garbage (or a payload for another name); a
// planner started on that stream plans nothing at the name, neither a
// delete nor a change, until a readable desired state comes for it.
func TestUnreadableDesiredStateIsUnknownNotNothingWanted(t *testing.T) {
	nc, js := startBus(t)
	www, api, gone := "www."+zone, "api."+zone, "gone."+zone
	for _, n := range []string{www, api, gone} {
		held(t, js, rr(n, "A", 300, "192.0.2.1"), rr("a-"+n, "TXT", 300, owned("me", "service/default/web")))
		wanted(t, js, rr(n, "A", 0, "192.0.2.1"))
	}
	zones(t, js, zone)
	publishRaw(t, js, events.DesiredSubject(www), []byte{0xc1, 0xff})
	publishOn(t, js, events.DesiredSubject(api), &events.DesiredState{DNSName: "other." + zone})
	publish(t, js, events.DesiredSubject(gone), &events.DesiredState{DNSName: gone}) // really not wanted any more
	sub := planSub(t, nc)
	runPlanner(t, js, Config{PlanTimeout: time.Second})
	publishComplete(t, js)

	plan := nextPlan(t, sub)
	want := []string{"delete A gone", "delete TXT a-gone"}
	if got := planLines(plan); !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant only the name really not wanted:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A readable state makes the name plannable again.
	wanted(t, js, rr(www, "A", 0, "192.0.2.9"))
	for {
		if lines := planLines(nextPlan(t, sub)); slices.Contains(lines, "update A www 192.0.2.9") {
			if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " api") }) {
				t.Fatalf("api, still unknown, planned: %v", lines)
			}
			break
		}
	}
}

// TestUnreadableObservedStateIsUnknownNotEmpty: garbage on an observed
// subject does not read as "the provider holds nothing there": the
// ownership record of a record we can no longer see is not an orphan to
// clean up.
func TestUnreadableObservedStateIsUnknownNotEmpty(t *testing.T) {
	nc, js := startBus(t)
	www, api, gone := "www."+zone, "api."+zone, "gone."+zone
	for _, n := range []string{www, api, gone} {
		held(t, js, rr(n, "A", 300, "192.0.2.1"), rr("a-"+n, "TXT", 300, owned("me", "service/default/web")))
	}
	zones(t, js, zone)
	// Nothing is wanted at any of them; what www and api hold is unreadable.
	publishRaw(t, js, events.ObservedSubject("p", www), []byte("not msgpack"))
	publishOn(t, js, events.ObservedSubject("p", api), &events.ObservedState{Provider: "p", Zone: zone, DNSName: "other." + zone})
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	publishComplete(t, js)

	plan := nextPlan(t, sub)
	want := []string{"delete A gone", "delete TXT a-gone"}
	if got := planLines(plan); !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant only the name whose state is known:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
