package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// TestUserTXTRecordsArePublished: a TXT a DNSEndpoint wants (an SPF
// policy) is planned when TXT is in --managed-record-types, as ExternalDNS
// publishes it, with its ownership record txt-<name> written first.
func TestUserTXTRecordsArePublished(t *testing.T) {
	nc, js := startBus(t)
	www := "www." + zone
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{ManagedRecordTypes: []string{"A", "TXT"}})
	wanted(t, js, rr(www, "TXT", 0, "v=spf1 include:example.net -all"))

	plan := nextPlan(t, sub)
	got := strings.Split(describe(plan.Changes), "\n")
	want := []string{"create TXT txt-www " + owned("me", "service/default/web"), "create TXT www v=spf1 include:example.net -all"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUserTXTAndOwnershipStringsKeepApart: where the user's TXT strings
// and ownership strings share one RRset (the old format at the name, the
// apex), a change to one leaves the other byte for byte; a TXT that no
// ownership record explicitly covers is never ours.
func TestUserTXTAndOwnershipStringsKeepApart(t *testing.T) {
	www := "www." + zone
	res := "service/default/web"
	spf := "v=spf1 -all"
	oldOurs := owned("me", "")
	reg := testRegistry(txtRegistry{managed: []string{"A", "TXT"}})
	typed := func(types ...string) string {
		return registry.Labels{Owner: "me", Resource: res, Types: types}.Format()
	}
	cases := []struct {
		name              string
		desired, observed []events.Endpoint
		want              string
	}{
		{
			name:     "a user TXT beside an old-format string of ours: the string stays as it is",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1"), rr(www, "TXT", 0, spf)},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, oldOurs)},
			want: "create TXT txt-www " + owned("me", res) + "\n" +
				"update TXT www " + oldOurs + "|" + spf,
		},
		{
			name:    "a user TXT of ours deleted: the old-format string beside it stays, then its ownership goes",
			desired: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, oldOurs, spf),
				rr("txt-"+www, "TXT", 300, owned("me", res))},
			want: "update TXT www " + oldOurs + "\n" +
				"delete TXT txt-www",
		},
		{
			name:     "an old-format string of ours does not make a hand-made TXT beside it ours",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, oldOurs, spf)},
			want:     "",
		},
		{
			name:     "nor a wanted TXT may overwrite it",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1"), rr(www, "TXT", 0, "v=spf1 ~all")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, oldOurs, spf)},
			want:     "",
		},
		{
			name:     "apex: our string for the A does not make someone's SPF ours",
			desired:  []events.Endpoint{rr(zone, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"), rr(zone, "TXT", 300, owned("me", res), spf)},
			want:     "",
		},
		{
			name:     "apex: a user TXT is owned by an explicit record-type field, beside the others' strings",
			desired:  []events.Endpoint{rr(zone, "A", 0, "192.0.2.1"), rr(zone, "TXT", 0, "token=abc")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"), rr(zone, "TXT", 300, owned("me", res))},
			want:     "update TXT " + zone + " " + typed("A", "TXT") + "|token=abc",
		},
		{
			name:     "apex: nor may a wanted TXT overwrite it",
			desired:  []events.Endpoint{rr(zone, "A", 0, "192.0.2.1"), rr(zone, "TXT", 0, "token=abc")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"), rr(zone, "TXT", 300, owned("me", res), spf)},
			want:     "",
		},
		{
			name:     "apex: a user TXT of ours goes, and so does its field; the others' strings stay",
			desired:  []events.Endpoint{rr(zone, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"), rr(zone, "TXT", 300, typed("A", "TXT"), owned("other", ""), "token=abc")},
			want:     "update TXT " + zone + " " + typed("A") + "|" + owned("other", ""),
		},
		{
			name:    "a wanted TXT that reads as an ownership record is refused",
			desired: []events.Endpoint{rr(www, "TXT", 0, owned("someone", ""))},
			want:    "",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := www
			if tc.desired[0].DNSName == zone {
				name = zone
			}
			got := planWith(reg, PolicySync, name, tc.desired, tc.observed)
			if d := describe(got.changes); d != tc.want {
				t.Errorf("changes:\n%s\nwant:\n%s", d, tc.want)
			}
		})
	}
}
