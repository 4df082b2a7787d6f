package dedup

import (
	"context"
	"sync"
	"time"

	"github.com/zonestream/zonestream/events"
)

// Who must be synced survives the sources stream. Every completeness mark
// names the collectors that must be synced (events.DesiredComplete
// Collectors); a restarted dedup reads its last mark back and requires
// them again, on top of whatever marks the sources stream still holds. A
// collector whose messages the sources stream lost (purged, lost with its
// node) therefore holds completeness until it says synced again, or the
// operator retires it. History read back only adds requirements: it never
// says that anyone is synced.

// inheritCollectors requires the collectors named by the last completeness
// mark on the desired stream. An unreadable mark is reported and adds
// nothing: the marks on the sources stream still count.
func (r *run) inheritCollectors(ctx context.Context) error {
	var (
		mu   sync.Mutex
		done bool
		last *events.DesiredComplete
	)
	err := events.ReadLast(ctx, r.js, events.StreamDesired, []string{events.DesiredCompleteSubject()}, func(m events.Received) {
		var c events.DesiredComplete
		if err := events.Decode(m, &c); err != nil {
			unreadableMarks.Inc()
			r.log.Error("the last completeness mark is unreadable: the collectors it named are not required again",
				"subject", m.Subject, "err", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !done {
			last = &c
		}
	})
	mu.Lock()
	defer mu.Unlock()
	done = true
	if err != nil || last == nil {
		return err
	}
	for _, ref := range last.Collectors {
		r.collectors.inherit(ref)
	}
	if len(last.Collectors) > 0 {
		r.log.Info("collectors named by the last completeness mark must say synced again", "collectors", len(last.Collectors))
	}
	return nil
}

// inherit requires a collector named by dedup's last mark, until the
// sources stream says more of it.
func (c *collectors) inherit(ref events.CollectorRef) {
	subject := events.CollectorSubject(ref.Cluster, ref.Collector)
	if _, known := c.bySubject[subject]; !known {
		c.bySubject[subject] = &collectorMark{state: events.CollectorState{CollectorRef: ref}}
	}
}

// awaits reports whether name must keep its published state because an
// object holding one of its records is gone from the sources stream while
// a collector watching it has not said synced since dedup started: the
// object may be gone, or only its messages (a purged stream). The name is
// recomputed once such a collector syncs or is retired (releaseAwaited).
func (r *run) awaits(name string, now time.Time) bool {
	for _, h := range r.published.holders[name] {
		for _, obj := range h.Objects {
			if _, known := r.wanted.objects[obj.Subject()]; !known && r.collectors.awaited(obj, now) {
				r.awaited[name] = struct{}{}
				return true
			}
		}
	}
	return false
}

// releaseAwaited schedules again every name kept for a collector: one
// has synced or left.
func (r *run) releaseAwaited() {
	for name := range r.awaited {
		if _, ok := r.dirty[name]; !ok {
			r.dirty[name] = ""
		}
	}
	clear(r.awaited)
}
