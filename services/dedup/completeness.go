package dedup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zonestream/zonestream/events"
)

// collectors tracks every collector on the bus and whether it is synced
// now. The desired stream is complete only while every collector is live
// and synced and every object on the sources stream is watched by one of
// them: a mark read back from history counts as a collector that must
// speak again, never as one that has synced.
type collectors struct {
	bySubject map[string]*collectorMark
}

type collectorMark struct {
	state events.CollectorState
	// liveUntil is when the synced mark's lease ends; zero while the
	// collector has not said "synced" live in this run of dedup.
	liveUntil time.Time
}

func newCollectors() *collectors { return &collectors{bySubject: map[string]*collectorMark{}} }

// observe takes in a collector's mark.
func (c *collectors) observe(subject string, st events.CollectorState, live bool, now time.Time) {
	if st.Phase == events.PhaseRetired {
		delete(c.bySubject, subject)
		return
	}
	m := &collectorMark{state: st}
	if live && st.Phase == events.PhaseSynced {
		m.liveUntil = now.Add(st.Lease())
	}
	c.bySubject[subject] = m
}

// complete reports whether every collector is synced now and every group
// of objects is watched by one of them; if not, why not.
func (c *collectors) complete(s *state, now time.Time) (clusters []string, ok bool, reason string) {
	if len(c.bySubject) == 0 {
		return nil, false, "no collector has said it synced"
	}
	var live []events.CollectorState
	for _, subj := range slices.Sorted(maps.Keys(c.bySubject)) {
		m := c.bySubject[subj]
		switch {
		case m.state.Phase == events.PhaseSyncing:
			return nil, false, fmt.Sprintf("collector %s/%s is syncing", m.state.Cluster, m.state.Collector)
		case m.liveUntil.IsZero():
			return nil, false, fmt.Sprintf("collector %s/%s has not said it is synced since dedup started", m.state.Cluster, m.state.Collector)
		case now.After(m.liveUntil):
			return nil, false, fmt.Sprintf("collector %s/%s went silent (its lease lapsed)", m.state.Cluster, m.state.Collector)
		}
		live = append(live, m.state)
		clusters = append(clusters, m.state.Cluster)
	}
	for g := range s.groups {
		covered := slices.ContainsFunc(live, func(cs events.CollectorState) bool { return cs.Covers(g) })
		if !covered {
			return nil, false, fmt.Sprintf("no synced collector watches %s objects of cluster %s in namespace %q", g.Source, g.Cluster, g.Namespace)
		}
	}
	slices.Sort(clusters)
	return slices.Compact(clusters), true, ""
}

// isCollectorMark reports whether subject is a collector's mark, and
// whether it is some other marker (a claim, an old mark) to leave alone.
func isCollectorMark(subject string) (mark, otherMarker bool) {
	if !events.IsMarker(subject) {
		return false, false
	}
	tokens := strings.Split(subject, ".")
	return len(tokens) == 5 && tokens[3] == "~collector", true
}

// publishComplete publishes a completeness mark. A complete mark comes
// after every desired state it covers, so a reader that sees it has them
// all; an incomplete one goes out at once.
func (r *run) publishComplete(ctx context.Context, complete bool, reason string) error {
	clusters := []string(nil)
	if complete {
		clusters, _, _ = r.collectors.complete(r.state, time.Now())
	}
	mark := &events.DesiredComplete{Complete: complete, Clusters: clusters, Reason: reason, Run: r.id,
		LeaseMillis: events.LeaseFor(r.cfg.Heartbeat)}
	_, ack, err := events.Publish(ctx, r.js, events.DesiredCompleteSubject(), mark, "")
	if err != nil {
		publishErrors.Inc()
		return err
	}
	r.markSeq = ack.Sequence
	if complete != r.complete || reason != r.reason {
		if complete {
			r.log.Info("desired state complete", "clusters", clusters)
		} else {
			r.log.Warn("desired state incomplete: deletes held", "why", reason)
		}
	}
	r.complete, r.reason = complete, reason
	completeGauge.Set(map[bool]float64{true: 1}[complete])
	return nil
}

// lost reports whether the desired stream lost what this run published
// (purged, or lost with its node): its last completeness mark is gone. It
// then forgets what it published, so that everything is published again.
func (r *run) lost(ctx context.Context) bool {
	if r.markSeq == 0 {
		return false
	}
	if held, err := events.Holds(ctx, r.js, events.StreamDesired, events.DesiredCompleteSubject()); err != nil || held {
		return false
	}
	streamLost.Inc()
	r.log.Error("the desired stream lost what dedup published (purged or lost); publishing everything again")
	r.published = &published{hashes: map[string]string{}, holders: r.published.holders}
	r.markSeq = 0
	r.markAll()
	return true
}

// reconnected re-reads what the desired stream holds after NATS
// reconnected: a server that restarted may have lost what it had just
// acknowledged. Every name is then compared with the stream again, and
// what differs is published before the completeness mark is renewed.
func (r *run) reconnected(ctx context.Context) bool {
	n := events.Reconnects(r.js)
	if n == r.reconnects {
		return false
	}
	published, err := readBack(ctx, r.js, r.log)
	if err != nil {
		return false // tried again at the next heartbeat
	}
	r.published, r.reconnects = published, n
	r.markAll()
	r.log.Info("reconnected to NATS: published state read back from the stream", "names", len(published.hashes))
	return true
}
