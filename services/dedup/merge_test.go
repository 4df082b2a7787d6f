package dedup

import (
	"testing"

	"github.com/zonestream/zonestream/events"
)

func obj(source, name string) events.ObjectRef {
	return events.ObjectRef{Cluster: "c1", Source: source, Namespace: "default", Name: name}
}

func TestMerge(t *testing.T) {
	a := func(ttl int64, ips ...string) events.Endpoint {
		return events.NewEndpoint("www.example.com", "A", ttl, ips...)
	}
	aaaa := events.NewEndpoint("www.example.com", "AAAA", 0, "2001:db8::1")
	cases := []struct {
		name        string
		priority    []string
		contribs    []contribution
		wantTargets map[string][]string // record type -> targets
		wantTTL     int64
		winners     int
		losers      int
	}{
		{
			name:        "one object",
			contribs:    []contribution{{obj("service", "a"), []events.Endpoint{a(0, "192.0.2.1")}}},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}}, winners: 1,
		},
		{
			name: "same source, two objects: targets united, shortest TTL kept",
			contribs: []contribution{
				{obj("service", "a"), []events.Endpoint{a(300, "192.0.2.1")}},
				{obj("service", "b"), []events.Endpoint{a(60, "192.0.2.2", "192.0.2.1")}},
			},
			wantTargets: map[string][]string{"A": {"192.0.2.1", "192.0.2.2"}}, wantTTL: 60, winners: 2,
		},
		{
			name:     "higher-priority source takes the whole name, every type",
			priority: []string{"ingress", "service"},
			contribs: []contribution{
				{obj("service", "a"), []events.Endpoint{a(0, "192.0.2.1"), aaaa}},
				{obj("ingress", "b"), []events.Endpoint{a(0, "192.0.2.9")}},
			},
			wantTargets: map[string][]string{"A": {"192.0.2.9"}}, winners: 1, losers: 1,
		},
		{
			name:     "unlisted source ranks last",
			priority: []string{"service"},
			contribs: []contribution{
				{obj("crd", "a"), []events.Endpoint{a(0, "192.0.2.1")}},
				{obj("service", "b"), []events.Endpoint{a(0, "192.0.2.2")}},
			},
			wantTargets: map[string][]string{"A": {"192.0.2.2"}}, winners: 1, losers: 1,
		},
		{
			name:        "nobody wants it: tombstone",
			wantTargets: map[string][]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := merge("www.example.com", tc.contribs, newRanking(tc.priority))
			got := map[string][]string{}
			for _, ep := range d.Endpoints {
				got[ep.RecordType] = ep.Targets
				if tc.wantTTL != 0 && ep.RecordTTL != tc.wantTTL {
					t.Errorf("TTL %d, want %d", ep.RecordTTL, tc.wantTTL)
				}
			}
			if len(got) != len(tc.wantTargets) {
				t.Fatalf("record types %v, want %v", got, tc.wantTargets)
			}
			for typ, want := range tc.wantTargets {
				if g := got[typ]; len(g) != len(want) || (len(g) > 0 && g[0] != want[0]) || (len(g) > 1 && g[1] != want[1]) {
					t.Errorf("%s targets %v, want %v", typ, g, want)
				}
			}
			if len(d.Contributors) != tc.winners || len(d.Losers) != tc.losers {
				t.Errorf("%d contributors %d losers, want %d and %d", len(d.Contributors), len(d.Losers), tc.winners, tc.losers)
			}
		})
	}
}

func TestMergeIsOrderIndependent(t *testing.T) {
	c1 := contribution{obj("service", "a"), []events.Endpoint{events.NewEndpoint("x.example.com", "A", 0, "192.0.2.1")}}
	c2 := contribution{obj("service", "b"), []events.Endpoint{events.NewEndpoint("x.example.com", "A", 0, "192.0.2.2")}}
	h1, _ := events.HashOf(merge("x.example.com", []contribution{c1, c2}, nil))
	h2, _ := events.HashOf(merge("x.example.com", []contribution{c2, c1}, nil))
	if h1 != h2 {
		t.Fatal("the order objects arrive in changed the desired state")
	}
}
