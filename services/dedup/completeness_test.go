package dedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
)

// announce publishes a collector's mark, as a collector of cluster
// watching sources does.
func (b *bus) announce(t *testing.T, cluster, run, phase string, sources ...string) {
	t.Helper()
	b.announceLease(t, cluster, run, phase, time.Minute, sources...)
}

func (b *bus) announceLease(t *testing.T, cluster, run, phase string, lease time.Duration, sources ...string) {
	t.Helper()
	cs := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: cluster,
		Collector: events.CollectorID(sources, ""), Sources: sources}, Run: run, Phase: phase, LeaseMillis: lease.Milliseconds()}
	if _, _, err := events.Publish(context.Background(), b.js, events.CollectorSubject(cluster, cs.Collector), cs, ""); err != nil {
		t.Fatal(err)
	}
}

func (b *bus) lastMark() (events.DesiredComplete, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.marks) == 0 {
		return events.DesiredComplete{}, 0
	}
	return b.marks[len(b.marks)-1], len(b.marks)
}

func (b *bus) waitMark(t *testing.T, what string, complete bool) events.DesiredComplete {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m, n := b.lastMark(); n > 0 && m.Complete == complete {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	m, _ := b.lastMark()
	t.Fatalf("timed out waiting for %s; last mark %+v", what, m)
	return m
}

func (b *bus) neverComplete(t *testing.T, what string, within time.Duration) {
	t.Helper()
	time.Sleep(within)
	if m, _ := b.lastMark(); m.Complete {
		t.Fatalf("%s: desired state marked complete: %+v", what, m)
	}
}

// TestDesiredCompleteOnlyOnceEveryCollectorSynced: the planner deletes only
// under a complete mark, so it comes after the desired state of everything
// every collector wants, never while one of them (a whole cluster, or one
// collector of a cluster that splits its sources) is still syncing, and it
// is withdrawn at once when a collector starts a new run.
func TestDesiredCompleteOnlyOnceEveryCollectorSynced(t *testing.T) {
	b := newBus(t)
	startDedup(t, b.js)
	b.publishSource(t, "one", events.NewEndpoint("one.example.com", "A", 0, "192.0.2.1"))
	ing := events.ObjectRef{Cluster: "c1", Source: "ingress", Namespace: "default", Name: "web"}
	b.publishObject(t, ing, events.NewEndpoint("web.example.com", "A", 0, "192.0.2.3"))
	other := events.ObjectRef{Cluster: "c2", Source: "service", Namespace: "default", Name: "two"}
	b.publishObject(t, other, events.NewEndpoint("two.example.com", "A", 0, "192.0.2.2"))
	b.waitFor(t, "every name", func(ds []events.DesiredState) bool { return len(ds) == 3 })

	b.announce(t, "c1", "r1", events.PhaseSynced, "service")
	b.announce(t, "c2", "r1", events.PhaseSynced, "service")
	b.neverComplete(t, "c1's ingress collector has not said a word", 300*time.Millisecond)

	b.announce(t, "c1", "r1", events.PhaseSyncing, "ingress")
	b.neverComplete(t, "c1's ingress collector is syncing", 300*time.Millisecond)
	b.announce(t, "c1", "r1", events.PhaseSynced, "ingress")
	b.waitMark(t, "the complete mark", true)
	b.mu.Lock()
	if b.desiredAtComplete != 3 {
		t.Errorf("complete marked after %d desired states, want after all 3", b.desiredAtComplete)
	}
	b.mu.Unlock()

	// A collector restarts: completeness goes at once, before its objects.
	b.announce(t, "c2", "r2", events.PhaseSyncing, "service")
	m := b.waitMark(t, "completeness withdrawn", false)
	if m.Reason == "" {
		t.Error("an incomplete mark says nothing of why")
	}
	b.announce(t, "c2", "r2", events.PhaseSynced, "service")
	b.waitMark(t, "complete again", true)

	// A cluster that joins says it is syncing first: deletes stop until it
	// has published everything.
	b.announce(t, "c3", "r1", events.PhaseSyncing, "service")
	b.waitMark(t, "a new cluster withdraws completeness", false)
}

// TestRestartTrustsNoMarkFromHistory: marks left on the stream by an
// earlier run say nothing of now; a restarted dedup withdraws completeness
// first, and restores it only once every collector says, live, that it is
// synced.
func TestRestartTrustsNoMarkFromHistory(t *testing.T) {
	b := newBus(t)
	_, stop := startDedup(t, b.js)
	b.publishSource(t, "one", events.NewEndpoint("one.example.com", "A", 0, "192.0.2.1"))
	b.announce(t, "c1", "r1", events.PhaseSynced, "service")
	b.waitMark(t, "complete", true)
	stop()

	_, n := b.lastMark()
	startDedup(t, b.js)
	// waitFor holds b.mu while it asks.
	b.waitFor(t, "the restart's first mark", func([]events.DesiredState) bool { return len(b.marks) > n })
	b.mu.Lock()
	first := b.marks[n]
	b.mu.Unlock()
	if first.Complete {
		t.Fatal("a restarted dedup's first mark says complete")
	}
	b.neverComplete(t, "no collector spoke since the restart", 500*time.Millisecond)
	b.announce(t, "c1", "r1", events.PhaseSynced, "service") // its heartbeat
	b.waitMark(t, "complete after a live mark", true)
}

// TestSilentCollectorWithdrawsCompleteness: a collector that stops renewing
// its mark may have missed changes in its cluster: its lease lapses and
// deletes are held, while its objects stay wanted.
func TestSilentCollectorWithdrawsCompleteness(t *testing.T) {
	b := newBus(t)
	startDedupWith(t, b.js, dedup.Config{Heartbeat: 100 * time.Millisecond})
	b.publishSource(t, "one", events.NewEndpoint("one.example.com", "A", 0, "192.0.2.1"))
	b.announceLease(t, "c1", "r1", events.PhaseSynced, 400*time.Millisecond, "service")
	b.waitMark(t, "complete", true)
	m := b.waitMark(t, "the lapsed lease", false)
	if d, _ := last(b.desired, "one.example.com"); len(d.Endpoints) != 1 {
		t.Fatalf("a silent collector's name lost its records: %+v (mark %+v)", d, m)
	}
}
