package dedup

import (
	"context"
	"errors"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// An object whose last message dedup rejects (undecodable, or claiming
// another identity than its subject) and of which this run knows no
// earlier state is unknown: what it wants cannot be told, so the names
// where it owned a record keep their published state until it speaks
// again. Never "wants nothing".

// reject parks a message dedup cannot take in on the dead-letter subject,
// with the reason, and counts it.
func (r *run) reject(ctx context.Context, m events.Received, err error) {
	reason := "undecodable"
	if errors.Is(err, events.ErrWrongSubject) {
		reason = "wrong_subject"
	}
	deadLetters.WithLabelValues(reason).Inc()
	r.log.Error("source event rejected; parked on the dead-letter subject", "subject", m.Subject, "reason", reason, "err", err)
	if err := events.DeadLetter(ctx, r.js, Name, m, err); err != nil {
		r.log.Error("dead-letter publish failed", "err", err)
	}
}

// markNamesOf recomputes the names ref owned.
func (r *run) markNamesOf(ref events.ObjectRef, cause string) {
	for name, holders := range r.published.holders {
		if heldBy(holders, ref) {
			r.dirty[name] = cause
		}
	}
}

// held reports whether name's published state must stay as it is: an
// object whose state is unknown owned one of its RRsets.
func (r *run) held(name string) bool {
	if len(r.unknown) == 0 {
		return false
	}
	for _, o := range r.published.holders[name] {
		for _, obj := range o.Objects {
			if _, ok := r.unknown[obj.Subject()]; ok {
				return true
			}
		}
	}
	return false
}

func heldBy(holders []events.RRsetHolder, ref events.ObjectRef) bool {
	for _, o := range holders {
		if slices.Contains(o.Objects, ref) {
			return true
		}
	}
	return false
}
