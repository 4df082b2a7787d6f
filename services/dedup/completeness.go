package dedup

import (
	"fmt"
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
	for _, subj := range sortedKeys(c.bySubject) {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
