package collector

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/events"
)

// errStreamLost ends a run whose published state vanished from the sources
// stream (purged, or lost with its node): the next run publishes
// everything again, as after a restart.
var errStreamLost = errors.New("the sources stream lost this collector's state")

// mark is the collector's own mark on the bus (events.CollectorState): it
// says "syncing" before the run publishes any object, "synced" once every
// object has been published, and renews that every heartbeat while the
// run lives, so dedup knows the desired state is complete only while this
// collector really is running and synced.
type mark struct {
	state   events.CollectorState
	subject string
	seq     uint64 // stream sequence of the last mark published
}

func (r *run) newMark() *mark {
	cfg := r.c.cfg
	id := events.CollectorID(cfg.Sources, cfg.Namespace)
	return &mark{
		state: events.CollectorState{
			CollectorRef: events.CollectorRef{Cluster: cfg.ClusterName, Collector: id,
				Sources: slices.Clone([]string(cfg.Sources)), Namespace: cfg.Namespace},
			Run: nuid.Next(), LeaseMillis: events.LeaseFor(cfg.Heartbeat)},
		subject: events.CollectorSubject(cfg.ClusterName, id),
	}
}

// announce publishes the mark in phase, retrying until it is published or
// ctx ends.
func (r *run) announce(ctx context.Context, phase string) error {
	r.mu.Lock()
	st := r.mark.state
	r.mu.Unlock()
	st.Phase = phase
	delay := retryBase
	for {
		_, ack, err := r.lastAck.Publish(ctx, r.mark.subject, &st, "")
		if err == nil {
			r.mu.Lock()
			r.mark.state.Phase, r.mark.seq = phase, ack.Sequence
			r.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		publishErrors.Inc()
		r.logger.Warn("publishing the collector's mark failed; retrying", "phase", phase, "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, retryMax)
	}
}

// heartbeat renews the mark every interval until ctx ends, and at once
// when a stage that has just started asks (events.RenewCollectorsSubject):
// it trusts only marks published since it started, and would otherwise
// wait up to an interval. A renewal is
// conditional on the last mark on the stream being this run's own (renew);
// when it is not, the mark is read to learn why: if it is gone, so is
// everything else this collector published, and the run ends with
// errStreamLost (through stop) so that the next one publishes it all.
func (r *run) heartbeat(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(r.c.cfg.Heartbeat)
	defer t.Stop()
	asked, unsubscribe, err := events.RenewalRequests(r.js, events.RenewCollectorsSubject())
	if err != nil {
		r.logger.Warn("not listening for renewal requests; the mark is renewed every heartbeat only", "err", err)
	} else {
		defer unsubscribe()
	}
	stream, err := r.js.Stream(ctx, events.StreamSources)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-asked:
		}
		if stream == nil || err != nil {
			if stream, err = r.js.Stream(ctx, events.StreamSources); err != nil {
				continue
			}
		}
		r.reverify(ctx)
		r.mu.Lock()
		seq, phase := r.mark.seq, r.mark.state.Phase
		r.mu.Unlock()
		if phase == events.PhaseSynced && r.renew(ctx, seq) {
			continue
		}
		last, gerr := stream.GetLastMsgForSubject(ctx, r.mark.subject)
		switch {
		case errors.Is(gerr, jetstream.ErrMsgNotFound) || errors.Is(gerr, jetstream.ErrStreamNotFound):
			streamLost.Inc()
			r.logger.Error("this collector's mark is gone from the sources stream (purged or lost); publishing everything again")
			stop(errStreamLost)
			return
		case gerr != nil:
			r.logger.Warn("checking the collector's mark failed", "err", gerr)
			continue
		case last.Sequence != seq && retiredMark(last):
			// An operator retired this cluster while it runs: its objects
			// were tombstoned, so all of them are published again.
			streamLost.Inc()
			r.logger.Error("this collector was retired while running; publishing everything again")
			stop(errStreamLost)
			return
		case last.Sequence != seq:
			// Another process with this cluster and sources (a second
			// replica) renews the same mark: harmless, both are synced.
			r.logger.Debug("collector mark renewed by another process", "seq", last.Sequence)
		}
		if phase == events.PhaseSynced {
			if err := r.announce(ctx, events.PhaseSynced); err != nil {
				return
			}
		}
	}
}

// renew publishes the synced mark again in one request, on the condition
// that the subject's last message is the mark this run published last
// (seq): what reading the mark back first would have checked, in one
// request instead of two, since at rest requests are most of the bus' work. The server still loads the subject's
// last message to check the condition, but once, inside the write. false:
// the mark is not ours any more, or the request failed; the caller reads
// the mark to learn which.
func (r *run) renew(ctx context.Context, seq uint64) bool {
	r.mu.Lock()
	st := r.mark.state
	r.mu.Unlock()
	st.Phase = events.PhaseSynced
	_, ack, err := r.lastAck.Publish(ctx, r.mark.subject, &st, "", jetstream.WithExpectLastSequencePerSubject(seq))
	if err != nil {
		return false
	}
	r.mu.Lock()
	r.mark.seq = ack.Sequence
	r.mu.Unlock()
	return true
}

// retiredMark reports whether m is a collector mark saying "retired".
func retiredMark(m *jetstream.RawStreamMsg) bool {
	var st events.CollectorState
	err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &st)
	return err == nil && st.Phase == events.PhaseRetired
}

// retireOverlapping retires the marks of this cluster's other collector ids
// that overlap this one (events.CollectorRef.Overlaps: some object would be
// watched by both): the same collector before its sources or namespace
// were reconfigured. Left alone, such a mark would never be renewed and
// would hold every delete back. A collector that does not overlap (other
// sources, or a namespace disjoint from this one's) is a different
// collector, running beside this one: its mark is left alone.
func (r *run) retireOverlapping(ctx context.Context) error {
	prefix := strings.TrimSuffix(events.CollectorSubject(r.c.cfg.ClusterName, "x"), "x")
	var (
		mu    sync.Mutex
		done  bool
		stale []events.CollectorState
	)
	err := events.ReadLast(ctx, r.js, events.StreamSources, []string{prefix + "*"}, func(m events.Received) {
		var st events.CollectorState
		if events.Decode(m, &st) != nil {
			return // not a mark this collector could retire
		}
		mu.Lock()
		defer mu.Unlock()
		if !done && st.Collector != r.mark.state.Collector && st.Phase != events.PhaseRetired &&
			r.mark.state.Overlaps(st.CollectorRef) {
			stale = append(stale, st)
		}
	})
	if err != nil {
		return err
	}
	mu.Lock()
	done = true
	mu.Unlock()
	for _, st := range stale {
		r.logger.Warn("retiring the mark of a collector this one replaces (it watched some of the same objects)",
			"collector", st.Collector, "sources", st.Sources, "namespace", st.Namespace)
		st.Phase = events.PhaseRetired
		if _, _, err := events.Publish(ctx, r.js, events.CollectorSubject(st.Cluster, st.Collector), &st, ""); err != nil {
			return err
		}
	}
	return nil
}

// ended is what a run returns once ctx is done: errStreamLost when the
// heartbeat found the stream had lost this collector's state.
func (r *run) ended(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStreamLost) {
		return cause
	}
	return ctx.Err()
}

// firstPassDone marks the collector ready and tells the bus that every
// object of this run has been published: downstream may now take a name
// nobody wants as really unwanted. The mark is retried until published.
func (r *run) firstPassDone(ctx context.Context) {
	r.c.setReady(nil)
	go func() {
		if err := r.announce(ctx, events.PhaseSynced); err == nil {
			r.logger.Info("announced the collector synced", "sources", r.mark.state.Sources)
		}
	}()
}

// reverify compares, after NATS reconnected, what this collector believes
// it published with what the stream holds: a server that restarted may
// have lost what it had just acknowledged (the last state of an object, a
// tombstone). Every object whose state differs is computed and published
// again.
func (r *run) reverify(ctx context.Context) {
	n := events.Reconnects(r.js)
	if n == r.reconnects {
		return
	}
	if kept, err := r.lastAck.Kept(ctx); err == nil && kept {
		r.mu.Lock()
		r.reconnects = n
		r.mu.Unlock()
		r.logger.Info("reconnected to NATS: the newest object state or mark it published is still there")
		return
	}
	fresh, err := events.LastHashes(ctx, r.js, events.StreamSources, events.SourceFilter(r.c.cfg.ClusterName))
	if err != nil {
		return // tried again at the next heartbeat
	}
	var stale []item
	r.mu.Lock()
	r.reconnects = n
	r.lastAck.ReadBack(n)
	for _, subjects := range []map[string]string{r.hashes, fresh} {
		for subject := range subjects {
			if r.hashes[subject] == fresh[subject] {
				continue
			}
			if it, ok := r.itemOf(subject); ok {
				stale = append(stale, it)
				if h, ok := fresh[subject]; ok {
					r.hashes[subject] = h
				} else {
					delete(r.hashes, subject)
				}
			}
		}
	}
	r.mu.Unlock()
	r.logger.Info("reconnected to NATS: published state compared with the stream", "republish", len(stale))
	for _, it := range stale {
		r.enqueue(it)
	}
}
