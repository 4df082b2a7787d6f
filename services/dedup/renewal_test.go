package dedup_test

import (
	"context"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
)

// answerRenewals stands for a synced collector of c1 whose heartbeat is
// far off: it renews its mark only when asked.
func (b *bus) answerRenewals(t *testing.T) {
	t.Helper()
	asked, stop, err := events.RenewalRequests(b.js, events.RenewCollectorsSubject())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); stop() })
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-asked:
				cs := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: "c1",
					Collector: events.CollectorID([]string{"service"}, ""), Sources: []string{"service"}},
					Run: "r1", Phase: events.PhaseSynced, LeaseMillis: time.Hour.Milliseconds()}
				_, _, _ = events.Publish(ctx, b.js, events.CollectorSubject("c1", cs.Collector), cs, "")
			}
		}
	}()
}

// TestRestartAsksTheCollectorsForFreshMarks: a restarted dedup trusts only
// marks published since it started; it asks the collectors for them
// rather than wait up to their heartbeat (30s by default) with every
// delete held.
func TestRestartAsksTheCollectorsForFreshMarks(t *testing.T) {
	b := newBus(t)
	b.publishSource(t, "one", events.NewEndpoint("one.example.com", "A", 0, "192.0.2.1"))
	b.announceLease(t, "c1", "r1", events.PhaseSynced, time.Hour, "service") // history to the dedup below
	b.answerRenewals(t)
	startDedupWith(t, b.js, dedup.Config{Heartbeat: time.Hour})
	b.waitMark(t, "complete, on the mark the collector renewed when asked", true)
}

// TestDedupRenewsItsMarkWhenAsked: a restarted planner trusts only a
// completeness mark published since it started; dedup publishes one at
// once when asked, not at its next heartbeat.
func TestDedupRenewsItsMarkWhenAsked(t *testing.T) {
	b := newBus(t)
	b.publishSource(t, "one", events.NewEndpoint("one.example.com", "A", 0, "192.0.2.1"))
	b.answerRenewals(t)
	startDedupWith(t, b.js, dedup.Config{Heartbeat: time.Hour})
	b.waitMark(t, "complete", true)
	_, n := b.lastMark()
	if err := events.RequestRenewal(b.js, events.RenewCompleteSubject()); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "the completeness mark renewed", func([]events.DesiredState) bool { return len(b.marks) > n && b.marks[n].Complete })
}
