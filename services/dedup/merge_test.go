package dedup

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
)

func ref(cluster, source, name string) events.ObjectRef {
	return events.ObjectRef{Cluster: cluster, Source: source, Namespace: "default", Name: name}
}

func obj(source, name string) events.ObjectRef { return ref("c1", source, name) }

const www = "www.example.com"

func ep(typ string, ttl int64, targets ...string) events.Endpoint {
	return events.NewEndpoint(www, typ, ttl, targets...)
}

func want(o events.ObjectRef, eps ...events.Endpoint) contribution { return contribution{o, eps} }

func owns(typ string, objs ...events.ObjectRef) events.RRsetHolder {
	return events.RRsetHolder{RecordType: typ, Objects: objs}
}

func TestMerge(t *testing.T) {
	withSet := func(e events.Endpoint, id string) events.Endpoint { e.SetIdentifier = id; return e }
	cases := []struct {
		name     string
		rules    rules
		contribs []contribution
		owned    []events.RRsetHolder
		// record type (/set identifier) -> targets
		wantTargets map[string][]string
		wantTTL     map[string]int64
		winners     []string // object names contributing
		// object name -> a part of its reason for losing
		losers map[string]string
	}{
		{
			name:        "one object",
			contribs:    []contribution{want(obj("service", "a"), ep("A", 0, "192.0.2.1"))},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}}, winners: []string{"a"},
		},
		{
			name: "same source, other TTLs: not united, fewer targets wins the RRset",
			contribs: []contribution{
				want(obj("service", "a"), ep("A", 300, "192.0.2.1", "192.0.2.2")),
				want(obj("service", "b"), ep("A", 60, "192.0.2.3")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.3"}}, wantTTL: map[string]int64{"A": 60},
			winners: []string{"b"}, losers: map[string]string{"a": "c1/service/default/b wants fewer targets for A www.example.com"},
		},
		{
			name: "sources of equal rank, as many targets: the lower address wins, compared as addresses",
			contribs: []contribution{
				want(obj("service", "a"), ep("A", 0, "192.0.2.10")),
				want(obj("ingress", "b"), ep("A", 0, "192.0.2.9")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.9"}},
			winners:     []string{"b"}, losers: map[string]string{"a": "wants lower targets"},
		},
		{
			name: "same targets, other TTLs: the lower object wins",
			contribs: []contribution{
				want(obj("service", "b"), ep("A", 60, "192.0.2.1")),
				want(obj("service", "a"), ep("A", 0, "192.0.2.1")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}},
			winners:     []string{"a"}, losers: map[string]string{"b": "wants the same targets for A www.example.com and sorts first"},
		},
		{
			name: "the owner keeps its RRset against a candidate the tie-break prefers",
			contribs: []contribution{
				want(obj("ingress", "a"), ep("A", 0, "192.0.2.1")),
				want(obj("service", "b"), ep("A", 0, "192.0.2.7", "192.0.2.8")),
			},
			owned:       []events.RRsetHolder{owns("A", obj("service", "b"))},
			wantTargets: map[string][]string{"A": {"192.0.2.7", "192.0.2.8"}},
			winners:     []string{"b"}, losers: map[string]string{"a": "object c1/service/default/b already owns A www.example.com"},
		},
		{
			name: "an owner that no longer wants the RRset: the tie-break decides among the rest",
			contribs: []contribution{
				want(obj("ingress", "a"), ep("A", 0, "192.0.2.5", "192.0.2.6")),
				want(obj("service", "b"), ep("A", 0, "192.0.2.7")),
				want(obj("service", "gone"), ep("AAAA", 0, "2001:db8::1")),
			},
			owned:       []events.RRsetHolder{owns("A", obj("service", "gone"))},
			wantTargets: map[string][]string{"A": {"192.0.2.7"}, "AAAA": {"2001:db8::1"}},
			winners:     []string{"b", "gone"}, losers: map[string]string{"a": "fewer targets"},
		},
		{
			name: "owning one RRset says nothing of another",
			contribs: []contribution{
				want(obj("ingress", "a"), ep("A", 0, "192.0.2.1")),
				want(obj("service", "b"), ep("A", 0, "192.0.2.2"), ep("AAAA", 0, "2001:db8::2")),
			},
			owned:       []events.RRsetHolder{owns("AAAA", obj("service", "b"))},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}, "AAAA": {"2001:db8::2"}},
			winners:     []string{"a", "b"}, losers: map[string]string{"b": "lower targets for A"},
		},
		{
			name: "set identifiers are separate RRsets",
			contribs: []contribution{
				want(obj("service", "a"), withSet(ep("A", 0, "192.0.2.1"), "eu")),
				want(obj("service", "b"), withSet(ep("A", 0, "192.0.2.2"), "us")),
			},
			wantTargets: map[string][]string{"A/eu": {"192.0.2.1"}, "A/us": {"192.0.2.2"}}, winners: []string{"a", "b"},
		},
		{
			name:  "higher-priority source takes the whole name, every type",
			rules: rules{sources: newRanking([]string{"ingress", "service"})},
			contribs: []contribution{
				want(obj("service", "a"), ep("A", 0, "192.0.2.1"), ep("AAAA", 0, "2001:db8::1")),
				want(obj("ingress", "b"), ep("A", 0, "192.0.2.9", "192.0.2.10")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.10", "192.0.2.9"}},
			winners:     []string{"b"}, losers: map[string]string{"a": `source "ingress" outranks "service"`},
		},
		{
			name:  "unlisted source ranks last",
			rules: rules{sources: newRanking([]string{"service"})},
			contribs: []contribution{
				want(obj("crd", "a"), ep("A", 0, "192.0.2.1")),
				want(obj("service", "b"), ep("A", 0, "192.0.2.2")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.2"}},
			winners:     []string{"b"}, losers: map[string]string{"a": `source "service" outranks "crd"`},
		},
		{
			name: "sources of equal rank compete per RRset like objects of one source",
			contribs: []contribution{
				want(obj("service", "a"), ep("A", 0, "192.0.2.1", "192.0.2.2")),
				want(obj("crd", "b"), ep("A", 0, "192.0.2.3")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.3"}},
			winners:     []string{"b"}, losers: map[string]string{"a": "fewer targets"},
		},
		{
			name: "CNAME beside A: the CNAME loses, even to a later object",
			contribs: []contribution{
				want(obj("service", "a"), ep("CNAME", 0, "lb.example.net")),
				want(obj("service", "b"), ep("A", 0, "192.0.2.1")),
				want(obj("service", "c"), ep("AAAA", 0, "2001:db8::1")),
			},
			owned:       []events.RRsetHolder{owns("CNAME", obj("service", "a"))},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}, "AAAA": {"2001:db8::1"}},
			winners:     []string{"b", "c"}, losers: map[string]string{"a": "CNAME conflicts with A, AAAA at www.example.com"},
		},
		{
			name:        "one object wanting a CNAME and an A keeps the A",
			contribs:    []contribution{want(obj("service", "a"), ep("CNAME", 0, "lb.example.net"), ep("A", 0, "192.0.2.1"))},
			wantTargets: map[string][]string{"A": {"192.0.2.1"}},
			winners:     []string{"a"}, losers: map[string]string{"a": "CNAME conflicts with A"},
		},
		{
			name:  "merged clusters: one winner per cluster, united, shortest TTL",
			rules: rules{mergeClusters: true},
			contribs: []contribution{
				want(ref("c1", "service", "a"), ep("A", 300, "192.0.2.1")),
				want(ref("c1", "ingress", "a2"), ep("A", 300, "192.0.2.4", "192.0.2.5")),
				want(ref("c2", "service", "b"), ep("A", 60, "192.0.2.2")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.1", "192.0.2.2"}}, wantTTL: map[string]int64{"A": 60},
			winners: []string{"a", "b"}, losers: map[string]string{"a2": "c1/service/default/a wants fewer targets"},
		},
		{
			name: "same source, same TTL: the objects' targets are united (ExternalDNS' MergeEndpoints)",
			contribs: []contribution{
				want(obj("service", "b"), ep("A", 0, "192.0.2.5", "192.0.2.6")),
				want(obj("service", "a"), ep("A", 0, "192.0.2.4")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.4", "192.0.2.5", "192.0.2.6"}}, winners: []string{"a", "b"},
		},
		{
			name: "united objects compete as one against another source of equal rank",
			contribs: []contribution{
				want(obj("pod", "node-1"), ep("A", 0, "192.0.2.1")),
				want(obj("pod", "node-2"), ep("A", 0, "192.0.2.2")),
				want(obj("service", "lb"), ep("A", 0, "192.0.2.9")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.9"}}, winners: []string{"lb"},
			losers: map[string]string{"node-1": "c1/service/default/lb wants fewer targets", "node-2": "c1/service/default/lb wants fewer targets"},
		},
		{
			name: "one united object holding the RRset keeps it for all of them",
			contribs: []contribution{
				want(obj("pod", "node-1"), ep("A", 0, "192.0.2.1")),
				want(obj("pod", "node-2"), ep("A", 0, "192.0.2.2")),
				want(obj("service", "lb"), ep("A", 0, "192.0.2.9")),
			},
			owned:       []events.RRsetHolder{owns("A", obj("pod", "node-2"))},
			wantTargets: map[string][]string{"A": {"192.0.2.1", "192.0.2.2"}}, winners: []string{"node-1", "node-2"},
			losers: map[string]string{"lb": "object c1/pod/default/node-1 already owns A"},
		},
		{
			name: "CNAMEs of one source are united only when they name the same target",
			contribs: []contribution{
				want(obj("service", "a"), ep("CNAME", 0, "lb.example.net")),
				want(obj("service", "b"), ep("CNAME", 0, "lb.example.net")),
				want(obj("service", "c"), ep("CNAME", 0, "alb.example.net")),
			},
			wantTargets: map[string][]string{"CNAME": {"alb.example.net"}}, winners: []string{"c"},
			losers: map[string]string{"a": "c1/service/default/c wants lower targets for CNAME", "b": "c1/service/default/c wants lower targets for CNAME"},
		},
		{
			name:  "merged clusters: each cluster's united objects, united across clusters",
			rules: rules{mergeClusters: true},
			contribs: []contribution{
				want(ref("c1", "pod", "n1"), ep("A", 0, "192.0.2.1")),
				want(ref("c1", "pod", "n2"), ep("A", 0, "192.0.2.2")),
				want(ref("c2", "pod", "n3"), ep("A", 0, "192.0.2.3")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.1", "192.0.2.2", "192.0.2.3"}}, winners: []string{"n1", "n2", "n3"},
		},
		{
			name:  "merged clusters: a CNAME holds one target, so one cluster's wins",
			rules: rules{mergeClusters: true},
			contribs: []contribution{
				want(ref("c1", "service", "a"), ep("CNAME", 0, "lb2.example.net")),
				want(ref("c2", "service", "b"), ep("CNAME", 0, "lb1.example.net")),
			},
			wantTargets: map[string][]string{"CNAME": {"lb1.example.net"}},
			winners:     []string{"b"}, losers: map[string]string{"a": "c2/service/default/b wants lower targets for CNAME"},
		},
		{
			name:  "merged clusters: source priority still holds across clusters",
			rules: rules{mergeClusters: true, sources: newRanking([]string{"ingress", "service"})},
			contribs: []contribution{
				want(ref("c1", "service", "a"), ep("A", 0, "192.0.2.1")),
				want(ref("c2", "ingress", "b"), ep("A", 0, "192.0.2.2")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.2"}},
			winners:     []string{"b"}, losers: map[string]string{"a": `source "ingress" outranks "service"`},
		},
		{
			name:  "cluster priority: the listed cluster keeps the name, every type",
			rules: rules{clusters: newRanking([]string{"c2", "c1"})},
			contribs: []contribution{
				want(ref("c1", "service", "a"), ep("A", 0, "192.0.2.1"), ep("AAAA", 0, "2001:db8::1")),
				want(ref("c2", "service", "b"), ep("A", 0, "192.0.2.2", "192.0.2.3")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.2", "192.0.2.3"}},
			winners:     []string{"b"}, losers: map[string]string{"a": `cluster "c2" outranks "c1"`},
		},
		{
			name:  "cluster priority: a listed cluster beats an unlisted one",
			rules: rules{clusters: newRanking([]string{"c2"})},
			contribs: []contribution{
				want(ref("c1", "service", "a"), ep("A", 0, "192.0.2.1")),
				want(ref("c2", "service", "b"), ep("A", 0, "192.0.2.2")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.2"}},
			winners:     []string{"b"}, losers: map[string]string{"a": `cluster "c2" outranks "c1"`},
		},
		{
			name:  "cluster priority: unlisted clusters tie on their names",
			rules: rules{clusters: newRanking([]string{"c9"})},
			contribs: []contribution{
				want(ref("c2", "service", "b"), ep("A", 0, "192.0.2.2")),
				want(ref("c1", "service", "a"), ep("A", 0, "192.0.2.1", "192.0.2.3")),
			},
			wantTargets: map[string][]string{"A": {"192.0.2.1", "192.0.2.3"}},
			winners:     []string{"a"}, losers: map[string]string{"b": `cluster "c1" outranks "c2"`},
		},
		{
			name:        "nobody wants it: tombstone",
			wantTargets: map[string][]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := merge(www, tc.contribs, tc.owned, tc.rules)
			got := map[string][]string{}
			for _, e := range d.Endpoints {
				key := e.RecordType
				if e.SetIdentifier != "" {
					key += "/" + e.SetIdentifier
				}
				got[key] = e.Targets
				if ttl, ok := tc.wantTTL[key]; ok && e.RecordTTL != ttl {
					t.Errorf("%s TTL %d, want %d", key, e.RecordTTL, ttl)
				}
			}
			if len(got) != len(tc.wantTargets) {
				t.Fatalf("RRsets %v, want %v", got, tc.wantTargets)
			}
			for key, w := range tc.wantTargets {
				if !slices.Equal(got[key], w) {
					t.Errorf("%s targets %v, want %v", key, got[key], w)
				}
			}
			var winners []string
			for _, c := range d.Contributors {
				winners = append(winners, c.Name)
			}
			if !slices.Equal(winners, tc.winners) {
				t.Errorf("contributors %v, want %v", winners, tc.winners)
			}
			if len(d.Losers) != len(tc.losers) {
				t.Errorf("losers %+v, want %v", d.Losers, tc.losers)
			}
			for _, l := range d.Losers {
				if w, ok := tc.losers[l.Object.Name]; !ok || !strings.Contains(l.Reason, w) {
					t.Errorf("%s lost with %q, want a reason with %q", l.Object.Name, l.Reason, w)
				}
			}
			// Every RRset has its owners, and they are the contributors.
			if len(d.Holders) != len(d.Endpoints) {
				t.Errorf("%d owner entries for %d RRsets", len(d.Holders), len(d.Endpoints))
			}
		})
	}
}

func TestCompareTargets(t *testing.T) {
	cases := []struct {
		a, b []string
		want int
	}{
		{[]string{"192.0.2.9"}, []string{"192.0.2.1", "192.0.2.2"}, -1},
		{[]string{"192.0.2.9"}, []string{"192.0.2.10"}, -1},
		{[]string{"2001:db8::2"}, []string{"2001:db8::10"}, -1},
		{[]string{"192.0.2.1"}, []string{"1-2-3-4.example.com"}, -1},
		{[]string{"b.example.com"}, []string{"a.example.com"}, 1},
		{[]string{"192.0.2.1", "192.0.2.2"}, []string{"192.0.2.1", "192.0.2.2"}, 0},
	}
	for _, tc := range cases {
		if got := compareTargets(tc.a, tc.b); got != tc.want {
			t.Errorf("compareTargets(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := compareTargets(tc.b, tc.a); got != -tc.want {
			t.Errorf("compareTargets(%v, %v) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

// TestMergeIsOrderIndependent: whatever order objects (and their
// endpoints) come in, one name's desired state is the same, under every
// rule at once.
func TestMergeIsOrderIndependent(t *testing.T) {
	contribs := []contribution{
		want(ref("c1", "service", "a"), ep("A", 300, "192.0.2.1", "192.0.2.2"), ep("AAAA", 0, "2001:db8::1")),
		want(ref("c1", "service", "b"), ep("A", 0, "192.0.2.3")),
		want(ref("c1", "service", "c"), ep("A", 0, "192.0.2.3")),
		want(ref("c1", "ingress", "d"), ep("CNAME", 0, "lb.example.net")),
		want(ref("c2", "service", "e"), ep("A", 60, "192.0.2.9"), ep("TXT", 0, "hello")),
		want(ref("c2", "service", "f"), ep("A", 0, "192.0.2.8", "192.0.2.7")),
		want(ref("c3", "crd", "g"), ep("AAAA", 0, "2001:db8::9")),
	}
	owned := []events.RRsetHolder{owns("AAAA", ref("c1", "service", "a"))}
	for _, rl := range []rules{
		{mergeClusters: true},
		{mergeClusters: true, sources: newRanking([]string{"crd"})},
		{clusters: newRanking([]string{"c2"})},
		{},
	} {
		first, err := events.HashOf(merge(www, contribs, owned, rl))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			shuffled := slices.Clone(contribs)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for i := range shuffled {
				eps := slices.Clone(shuffled[i].endpoints)
				rng.Shuffle(len(eps), func(i, j int) { eps[i], eps[j] = eps[j], eps[i] })
				shuffled[i].endpoints = eps
			}
			h, err := events.HashOf(merge(www, shuffled, owned, rl))
			if err != nil {
				t.Fatal(err)
			}
			if h != first {
				t.Fatalf("rules %+v: the order objects arrive in changed the desired state", rl)
			}
		}
	}
}

// TestWantedComparesNormalizedEndpoints: an object spelling its targets
// differently (duplicates, case, order) competes with what they mean.
func TestWantedComparesNormalizedEndpoints(t *testing.T) {
	s := newWanted()
	a := ref("c1", "service", "a")
	b := ref("c1", "ingress", "b") // another source: not united
	s.set(a.Subject(), events.SourceState{Object: a, Endpoints: []events.Endpoint{
		{DNSName: "WWW.Example.com.", RecordType: "a", Targets: []string{"192.0.2.2", "192.0.2.1", "192.0.2.1"}}}})
	s.set(b.Subject(), events.SourceState{Object: b, Endpoints: []events.Endpoint{
		{DNSName: "www.example.com", RecordType: "A", Targets: []string{"192.0.2.4", "192.0.2.3"}}}})
	d := merge(www, s.contributions(www), nil, rules{})
	if len(d.Contributors) != 1 || d.Contributors[0] != a || len(d.Endpoints) != 1 ||
		!slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.1", "192.0.2.2"}) {
		t.Fatalf("want a's two targets to win on the lower address; got %+v", d)
	}
}

// TestUnitedKeepsTheFirstObjectsProperties: united objects' provider-specific
// properties are the lowest object's, whatever order they come in, as
// ExternalDNS keeps the first endpoint it merges into.
func TestUnitedKeepsTheFirstObjectsProperties(t *testing.T) {
	weighted := func(weight string, targets ...string) events.Endpoint {
		e := ep("A", 0, targets...)
		e.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "aws/weight", Value: weight}}
		return e
	}
	contribs := []contribution{
		want(obj("pod", "b"), weighted("20", "192.0.2.2")),
		want(obj("pod", "a"), weighted("10", "192.0.2.1")),
	}
	for _, order := range [][]contribution{contribs, {contribs[1], contribs[0]}} {
		d := merge(www, order, nil, rules{})
		if len(d.Endpoints) != 1 || !slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.1", "192.0.2.2"}) ||
			len(d.Endpoints[0].ProviderSpecific) != 1 || d.Endpoints[0].ProviderSpecific[0].Value != "10" {
			t.Fatalf("united endpoint %+v, want both targets and a's weight 10", d.Endpoints)
		}
		if len(d.Holders) != 1 || len(d.Holders[0].Objects) != 2 {
			t.Fatalf("holders %+v, want both objects", d.Holders)
		}
	}
}
