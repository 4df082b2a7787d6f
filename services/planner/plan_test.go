package planner

import (
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

const zone = "example.test"

func rr(name, typ string, ttl int64, targets ...string) events.Endpoint {
	return events.NewEndpoint(name, typ, ttl, targets...)
}

func owned(owner, resource string) string {
	return registry.Labels{Owner: owner, Resource: resource}.Format()
}

// describe renders changes as "create A www" lines, for readable tables.
func describe(cs []events.Change) string {
	var out []string
	for _, c := range cs {
		k := c.Key()
		line := c.Action() + " " + k.RecordType + " " + strings.TrimSuffix(k.DNSName, "."+zone)
		if c.New != nil {
			line += " " + strings.Join(c.New.Targets, "|")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestPlanName(t *testing.T) {
	www := "www." + zone
	res := "service/default/web"
	cases := []struct {
		name     string
		policy   Policy
		desired  []events.Endpoint
		observed []events.Endpoint
		want     string
		planAs   string // the name planned, when not the obvious one
	}{
		{
			name:    "create: ownership TXT goes first",
			desired: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			want: "create TXT a-www " + owned("me", res) + "\n" +
				"create A www 192.0.2.1",
		},
		{
			name:     "update an owned record",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "update A www 192.0.2.2",
		},
		{
			name:     "nothing to do when the record matches",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "",
		},
		{
			name:     "a configured TTL that differs is an update",
			desired:  []events.Endpoint{rr(www, "A", 60, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "update A www 192.0.2.1",
		},
		{
			name:     "delete: record first, then its ownership",
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "delete A www\ndelete TXT a-www",
		},
		{
			name:     "an unowned record is never touched",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.9")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")},
			want:     "",
		},
		{
			name:     "another owner's record is never touched, nor deleted",
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("other", ""))},
			want:     "",
		},
		{
			name:     "another owner's claim blocks a create",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.9")},
			observed: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("other", ""))},
			want:     "",
		},
		{
			name:     "ownership by type: an AAAA of ours beside someone's A",
			desired:  []events.Endpoint{rr(www, "AAAA", 0, "2001:db8::1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")},
			want:     "create TXT aaaa-www " + owned("me", res) + "\ncreate AAAA www 2001:db8::1",
		},
		{
			name:     "old-format ownership (TXT at the name) is honoured",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, owned("me", ""))},
			want:     "create TXT a-www " + owned("me", res) + "\nupdate A www 192.0.2.2",
		},
		{
			name:     "old-format ownership goes with the last record",
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, owned("me", ""))},
			want:     "delete A www\ndelete TXT www",
		},
		{
			name:     "old-format ownership stays while a record of ours stays",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "CNAME", 300, "x.example.net"), rr(www, "TXT", 300, owned("me", ""))},
			want:     "delete CNAME www",
		},
		{
			name:     "old-format ownership without record-type fields never covers AAAA (as ExternalDNS)",
			desired:  []events.Endpoint{rr(www, "AAAA", 0, "2001:db8::2")},
			observed: []events.Endpoint{rr(www, "AAAA", 300, "2001:db8::1"), rr(www, "TXT", 300, owned("me", ""))},
			want:     "",
		},
		{
			name:     "a registry name is no host of its own: a-www is www's, never a-www's orphan",
			observed: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("me", res))},
			planAs:   "a-" + www,
			want:     "",
		},
		{
			name:     "an orphaned ownership record of ours is cleaned up",
			observed: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "delete TXT a-www",
		},
		{
			name:     "a record deleted by hand is put back",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "create A www 192.0.2.1",
		},
		{
			name:     "upsert-only never deletes",
			policy:   PolicyUpsertOnly,
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "",
		},
		{
			name:     "create-only never updates",
			policy:   PolicyCreateOnly,
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", res))},
			want:     "",
		},
		{
			name:     "apex: ownership lives in the TXT at the name, beside SPF",
			desired:  []events.Endpoint{rr(zone, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(zone, "TXT", 300, "v=spf1 -all"), rr(zone, "NS", 300, "ns.example.test")},
			want:     "update TXT " + zone + " " + owned("me", res) + "|v=spf1 -all\ncreate A " + zone + " 192.0.2.1",
		},
		{
			name:     "apex delete keeps SPF",
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"), rr(zone, "TXT", 300, "v=spf1 -all", owned("me", res))},
			want:     "delete A " + zone + "\nupdate TXT " + zone + " v=spf1 -all",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			policy := tc.policy
			if policy == "" {
				policy = PolicySync
			}
			byName := map[string][]events.Endpoint{}
			for _, ep := range tc.observed {
				byName[ep.DNSName] = append(byName[ep.DNSName], ep)
			}
			name := www
			if tc.planAs != "" {
				name = tc.planAs
			} else if len(tc.desired) > 0 {
				name = tc.desired[0].DNSName
			} else if len(tc.observed) > 0 && tc.observed[0].DNSName == zone {
				name = zone
			}
			got := planName(nameInput{name: name, zone: zone, desired: tc.desired, resource: res,
				observed: func(n string) []events.Endpoint { return byName[n] },
				policy:   policy, reg: testRegistry(txtRegistry{})})
			if d := describe(got.changes); d != tc.want {
				t.Errorf("changes:\n%s\nwant:\n%s", d, tc.want)
			}
		})
	}
}

func TestZoneOfPicksTheLongest(t *testing.T) {
	if z, _ := zoneOf("a.b.example.com", []string{"example.com", "b.example.com"}); z != "b.example.com" {
		t.Errorf("zoneOf picked %q, want the longest match", z)
	}
}
