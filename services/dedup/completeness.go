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

// collectors tracks every collector that must be synced and whether it is
// synced now. The desired stream is complete only while every one of them
// is live and synced and every object on the sources stream is watched by
// one of them: a mark read back from history counts as a collector that
// must speak again, never as one that has synced.
//
// Who must be synced is not "whoever is on the sources stream now": that
// stream may lose a collector's messages (purged, lost with its node). So
// it also holds the collectors named by dedup's own last mark (required.go),
// and a collector leaves it only when retired: by the operator (zonestream
// cluster retire: its mark says retired, or its cluster's claim is
// released) or by its successor on the same subject (the same cluster,
// sources and namespace), or a reconfigured one that retired its mark.
type collectors struct {
	bySubject map[string]*collectorMark
	// retired are the collectors whose last mark says retired, and
	// retiredClusters the clusters whose claim is released: what the
	// completeness mark lists, so that a planner can tell a retired
	// collector from one that was forgotten.
	retired         map[string]events.CollectorRef
	retiredClusters map[string]bool
}

type collectorMark struct {
	// state is the collector's last mark; its Phase is empty while the
	// collector is known only from dedup's last completeness mark.
	state events.CollectorState
	// liveUntil is when the synced mark's lease ends; zero while the
	// collector has not said "synced" live in this run of dedup.
	liveUntil time.Time
}

func newCollectors() *collectors {
	return &collectors{bySubject: map[string]*collectorMark{}, retired: map[string]events.CollectorRef{},
		retiredClusters: map[string]bool{}}
}

// syncedAt reports whether the collector is live and synced at now.
func (m *collectorMark) syncedAt(now time.Time) bool {
	return m.state.Phase == events.PhaseSynced && !m.liveUntil.IsZero() && !now.After(m.liveUntil)
}

// observe takes in a collector's mark. It reports whether a collector
// became synced or left: names waiting for one may go out now.
func (c *collectors) observe(subject string, st events.CollectorState, live bool, now time.Time) bool {
	prev, known := c.bySubject[subject]
	if st.Phase == events.PhaseRetired {
		delete(c.bySubject, subject)
		c.retired[subject] = st.CollectorRef
		return known
	}
	delete(c.retired, subject)
	m := &collectorMark{state: st}
	if live && st.Phase == events.PhaseSynced {
		m.liveUntil = now.Add(st.Lease())
	}
	c.bySubject[subject] = m
	return m.syncedAt(now) && (!known || !prev.syncedAt(now))
}

// claim takes in a cluster's claim. A released claim is the operator's
// zonestream cluster retire: every collector of the cluster leaves, even
// one whose own mark the sources stream lost. It reports whether one left.
func (c *collectors) claim(claim events.ClusterClaim) bool {
	if !claim.IsTombstone() {
		delete(c.retiredClusters, claim.Cluster)
		return false
	}
	c.retiredClusters[claim.Cluster] = true
	left := false
	for subj, m := range c.bySubject {
		if m.state.Cluster == claim.Cluster {
			delete(c.bySubject, subj)
			c.retired[subj] = m.state.CollectorRef
			left = true
		}
	}
	return left
}

// complete reports whether every collector is synced now and every group
// of objects is watched by one of them; if not, why not.
func (c *collectors) complete(s *wanted, now time.Time) (clusters []string, ok bool, reason string) {
	if len(c.bySubject) == 0 {
		return nil, false, "no collector has said it synced"
	}
	var live []events.CollectorState
	for _, subj := range slices.Sorted(maps.Keys(c.bySubject)) {
		m := c.bySubject[subj]
		switch {
		case m.state.Phase == "":
			return nil, false, fmt.Sprintf("collector %s/%s, named by dedup's last completeness mark, has not said it is synced "+
				"since dedup started, and the sources stream holds no mark of it (if cluster %s is gone: zonestream cluster retire %s)",
				m.state.Cluster, m.state.Collector, m.state.Cluster, m.state.Cluster)
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

// refs lists the collectors that must be synced, and those retired, in
// subject order.
func (c *collectors) refs() (required, retired []events.CollectorRef, retiredClusters []string) {
	for _, subj := range slices.Sorted(maps.Keys(c.bySubject)) {
		required = append(required, c.bySubject[subj].state.CollectorRef)
	}
	for _, subj := range slices.Sorted(maps.Keys(c.retired)) {
		retired = append(retired, c.retired[subj])
	}
	return required, retired, slices.Sorted(maps.Keys(c.retiredClusters))
}

// awaited reports whether obj is watched by a collector that must be
// synced and is not synced now: whether obj is gone cannot be told yet.
func (c *collectors) awaited(obj events.ObjectRef, now time.Time) bool {
	for _, m := range c.bySubject {
		if m.state.Covers(obj) && !m.syncedAt(now) {
			return true
		}
	}
	return false
}

// markerKind says which of the pipeline's markers a sources subject is.
type markerKind int

const (
	notMarker markerKind = iota
	collectorMarker
	claimMarker
	otherMarker // a marker of another version: left alone
)

func markerOf(subject string) markerKind {
	if !events.IsMarker(subject) {
		return notMarker
	}
	tokens := strings.Split(subject, ".")
	switch {
	case len(tokens) == 5 && tokens[3] == "~collector":
		return collectorMarker
	case len(tokens) == 4 && tokens[3] == "~claim":
		return claimMarker
	}
	return otherMarker
}

// publishComplete publishes a completeness mark. A complete mark comes
// after every desired state it covers, so a reader that sees it has them
// all; an incomplete one goes out at once.
func (r *run) publishComplete(ctx context.Context, complete bool, reason string) error {
	clusters := []string(nil)
	if complete {
		clusters, _, _ = r.collectors.complete(r.wanted, time.Now())
	}
	required, retired, retiredClusters := r.collectors.refs()
	mark := &events.DesiredComplete{Complete: complete, Clusters: clusters, Collectors: required,
		RetiredCollectors: retired, RetiredClusters: retiredClusters, Reason: reason, Run: r.id,
		LeaseMillis: events.LeaseFor(r.cfg.Heartbeat)}
	_, ack, err := r.lastAck.Publish(ctx, events.DesiredCompleteSubject(), mark, "")
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
	if kept, err := r.lastAck.Kept(ctx); err == nil && kept {
		r.reconnects = n
		r.log.Info("reconnected to NATS: the newest desired state it published is still there")
		return false
	}
	published, err := readBack(ctx, r.js, r.log)
	if err != nil {
		return false // tried again at the next heartbeat
	}
	r.published, r.reconnects = published, n
	r.lastAck.ReadBack(n)
	r.markAll()
	r.log.Info("reconnected to NATS: published state read back from the stream", "names", len(published.hashes))
	return true
}
