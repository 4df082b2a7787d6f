package dedup_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
)

// TestDedupOwnerKeepsRecordAcrossRestart: an object that holds an RRset
// keeps it against a newcomer the tie-break would prefer, also after a
// restart (dedup reads the owners back from what it published); once the
// owner lets go, the newcomer gets it.
func TestDedupOwnerKeepsRecordAcrossRestart(t *testing.T) {
	b := newBus(t)
	_, stop := startDedup(t, b.js)
	b.publishSource(t, "big", events.NewEndpoint(www, "A", 0, "192.0.2.7", "192.0.2.8"))
	b.waitFor(t, "big's records", func(ds []events.DesiredState) bool {
		d, ok := last(ds, www)
		return ok && len(d.Endpoints) == 1 && len(d.Endpoints[0].Targets) == 2
	})
	// Another TTL: not united with big's, so the two compete.
	b.publishSource(t, "small", events.NewEndpoint(www, "A", 60, "192.0.2.1"))
	b.waitFor(t, "small reported as the loser", func(ds []events.DesiredState) bool {
		d, _ := last(ds, www)
		return len(d.Losers) == 1 && d.Losers[0].Object.Name == "small" &&
			strings.Contains(d.Losers[0].Reason, "already owns A "+www)
	})
	if d, _ := last(b.desired, www); len(d.Endpoints) != 1 || !slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.7", "192.0.2.8"}) {
		t.Fatalf("the owner lost its record: %+v", d)
	}
	before := b.count()

	stop()
	_, stop = startDedup(t, b.js)
	// A name published after the restart is flushed after the replayed ones.
	b.publishSource(t, "marker", events.NewEndpoint("marker.example.com", "A", 0, "192.0.2.99"))
	b.waitFor(t, "the marker", func(ds []events.DesiredState) bool { _, ok := last(ds, "marker.example.com"); return ok })
	if n := b.count(); n != before+1 {
		t.Fatalf("the restart republished %d names; the owner must keep its record unchanged", n-before-1)
	}

	b.publishSource(t, "big") // the owner goes
	b.waitFor(t, "small takes over", func(ds []events.DesiredState) bool {
		d, _ := last(ds, www)
		return len(d.Endpoints) == 1 && slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.1"}) && len(d.Losers) == 0
	})
	stop()
}

const www = "www.example.com"

// TestDedupSameStateWhateverTheOrder: the same source events, published in
// any order and replayed into dedup, give the same desired state; a restart
// replaying them again publishes nothing new.
func TestDedupSameStateWhateverTheOrder(t *testing.T) {
	type wish struct {
		ref events.ObjectRef
		eps []events.Endpoint
	}
	r := func(cluster, source, name string) events.ObjectRef {
		return events.ObjectRef{Cluster: cluster, Source: source, Namespace: "default", Name: name}
	}
	a := func(name string, ips ...string) events.Endpoint { return events.NewEndpoint(name, "A", 0, ips...) }
	wishes := []wish{
		{r("c1", "service", "one"), []events.Endpoint{events.NewEndpoint(www, "A", 300, "192.0.2.1", "192.0.2.2")}},
		{r("c1", "service", "two"), []events.Endpoint{a(www, "192.0.2.3"), a("api.example.com", "192.0.2.3")}},
		{r("c1", "service", "three"), []events.Endpoint{a(www, "192.0.2.3")}},
		{r("c1", "ingress", "four"), []events.Endpoint{events.NewEndpoint("api.example.com", "CNAME", 0, "lb.example.net")}},
		{r("c2", "service", "five"), []events.Endpoint{a(www, "192.0.2.9"), a("api.example.com", "192.0.2.10")}},
		{r("c2", "crd", "six"), []events.Endpoint{events.NewEndpoint("api.example.com", "AAAA", 0, "2001:db8::1")}},
	}
	names := []string{"api.example.com", www}
	var first map[string]string
	for round := range 4 {
		order := slices.Clone(wishes)
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		b := newBus(t)
		for _, w := range order {
			b.publishObject(t, w.ref, w.eps...)
		}
		_, stop := startDedupWith(t, b.js, dedup.Config{SourcePriority: []string{"service", "crd"}})
		b.waitFor(t, "every name", func(ds []events.DesiredState) bool { return len(ds) == len(names) })
		got := map[string]string{}
		for _, n := range names {
			d, _ := last(b.desired, n)
			h, err := events.HashOf(&d)
			if err != nil {
				t.Fatal(err)
			}
			got[n] = h
		}
		if first == nil {
			first = got
			// The rules, checked once: at www, two and three (same TTL)
			// united, one (another TTL) losing the tie-break to them,
			// clusters merged; at api, service outranks crd and ingress,
			// and c2's A joins c1's.
			if d, _ := last(b.desired, www); !slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.3", "192.0.2.9"}) || len(d.Losers) != 1 ||
				d.Losers[0].Object.Name != "one" || len(d.Contributors) != 3 {
				t.Fatalf("www: %+v", d)
			}
			if d, _ := last(b.desired, "api.example.com"); len(d.Endpoints) != 1 || len(d.Losers) != 2 ||
				!slices.Equal(d.Endpoints[0].Targets, []string{"192.0.2.10", "192.0.2.3"}) {
				t.Fatalf("api: %+v", d)
			}
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Fatalf("order %d gave another desired state", round)
		}
		if round < 3 {
			stop()
			continue
		}
		stop()
		startDedupWith(t, b.js, dedup.Config{SourcePriority: []string{"service", "crd"}})
		b.publishSource(t, "marker", events.NewEndpoint("marker.example.com", "A", 0, "192.0.2.99"))
		b.waitFor(t, "the marker", func(ds []events.DesiredState) bool { _, ok := last(ds, "marker.example.com"); return ok })
		if n := b.count(); n != len(names)+1 {
			t.Fatalf("a restart replaying the same streams republished %d names", n-len(names)-1)
		}
	}
}

// TestDedupClusterPriorityFromFlags: --cluster-policy=priority with
// --cluster-priority gives a name to the listed cluster alone.
func TestDedupClusterPriorityFromFlags(t *testing.T) {
	var cfg dedup.Config
	fs := flag.NewFlagSet("dedup", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"--cluster-policy=priority", "--cluster-priority=c2"}); err != nil {
		t.Fatal(err)
	}
	b := newBus(t)
	startDedupWith(t, b.js, cfg)
	c1 := events.ObjectRef{Cluster: "c1", Source: "service", Namespace: "default", Name: "web"}
	c2 := events.ObjectRef{Cluster: "c2", Source: "service", Namespace: "default", Name: "web"}
	b.publishObject(t, c1, events.NewEndpoint(www, "A", 0, "192.0.2.1"), events.NewEndpoint(www, "AAAA", 0, "2001:db8::1"))
	b.publishObject(t, c2, events.NewEndpoint(www, "A", 0, "192.0.2.2", "192.0.2.3"))
	b.waitFor(t, "c2 alone", func(ds []events.DesiredState) bool {
		d, _ := last(ds, www)
		return len(d.Endpoints) == 1 && len(d.Endpoints[0].Targets) == 2 && len(d.Losers) == 1 &&
			d.Losers[0].Object == c1 && d.Losers[0].Reason == `cluster "c2" outranks "c1"`
	})
}

// TestDedupClustersMergedByDefault: with no flags, one name wanted in two
// clusters is served by both.
func TestDedupClustersMergedByDefault(t *testing.T) {
	var cfg dedup.Config
	fs := flag.NewFlagSet("dedup", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	b := newBus(t)
	startDedupWith(t, b.js, cfg)
	for i, c := range []string{"c1", "c2"} {
		b.publishObject(t, events.ObjectRef{Cluster: c, Source: "service", Namespace: "default", Name: "web"},
			events.NewEndpoint(www, "A", 0, fmt.Sprint("192.0.2.", i+1)))
	}
	b.waitFor(t, "both clusters' targets", func(ds []events.DesiredState) bool {
		d, _ := last(ds, www)
		return len(d.Endpoints) == 1 && len(d.Endpoints[0].Targets) == 2 && len(d.Contributors) == 2 && len(d.Holders) == 1
	})
}

func TestNewRejectsUnknownClusterPolicy(t *testing.T) {
	if _, err := dedup.New(dedup.Config{ClusterPolicy: "first"}, nil); err == nil || !strings.Contains(err.Error(), "cluster-policy") {
		t.Fatalf("want an error naming --cluster-policy, got %v", err)
	}
}
