package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// record is a lease's value, JSON so that `nats kv get ZS_LEASES KEY`
// reads it. Holder and Run say who holds it; Run alone tells this
// replica's own lease from another's. Released says its holder gave it up
// on a clean stop: anyone may take it at once.
type record struct {
	Holder      string    `json:"holder"`
	Run         string    `json:"run"`
	LeaseMillis int64     `json:"leaseMillis"`
	AcquiredAt  time.Time `json:"acquiredAt"`
	RenewedAt   time.Time `json:"renewedAt"`
	Released    bool      `json:"released,omitempty"`
}

// lease is how long rec holds unless renewed; a record that cannot be read
// holds for ours.
func (r *record) lease(ours time.Duration) time.Duration {
	if r == nil || r.LeaseMillis <= 0 {
		return ours
	}
	return time.Duration(r.LeaseMillis) * time.Millisecond
}

// observation is the lease's last revision this replica saw, and when it
// first saw it, on its own clock: a standby counts the lease duration from
// there, never from the holder's clock. A key with no trace left is
// revision 0: a replica that saw the key before counts from when it first
// found it gone; one that never saw it (at is zero) cannot tell it from a
// key never written, and takes it at once.
type observation struct {
	rev uint64
	at  time.Time
	own bool // this replica wrote it
	// held says this Elector has held the lease at some time: from then
	// on, its identity in the lease is its own run or another replica's.
	held bool
	// acquired is when this replica took the lease, while own.
	acquired time.Time
}

// sighting is what a read of the lease found: a record, or a key that
// vanished (rec nil), deleted or purged (rev is the marker's) or without
// a trace (rev 0).
type sighting struct {
	rev uint64
	rec *record
}

// read reads the lease's last message on its subject rather than through
// kv.Get, which answers "not found" alike for a key deleted or purged a
// moment ago and for one never written: the first must be waited out, as
// its holder may still be working, the second need not. A lease record is
// never empty, so an empty message is a marker: the key vanished.
func (e *Elector) read(ctx context.Context) (sighting, error) {
	msg, err := e.stream.GetLastMsgForSubject(ctx, events.LeaseSubject(e.key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return sighting{}, nil
	}
	if err != nil {
		return sighting{}, err
	}
	seen := sighting{rev: msg.Sequence}
	if len(msg.Data) == 0 {
		return seen, nil
	}
	if json.Unmarshal(msg.Data, &seen.rec) != nil || seen.rec == nil {
		seen.rec = &record{} // unreadable: a foreign holder, waited out like any other
	}
	return seen, nil
}

// tryAcquireOrRenew takes the lease if it is released, has not changed
// for its lease duration, or was never written; renews it if it is ours,
// and writes it again if it vanished under this leader. Every write is a
// compare-and-set on the revision read: of replicas trying at once, one
// wins. start is when the attempt began: a renewal holds from then, never
// from its answer.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, start time.Time) error {
	if e.renewOwn(ctx, start) {
		return nil
	}
	e.mu.Lock()
	before := e.observed
	e.mu.Unlock()
	seen, err := e.read(ctx)
	if err != nil {
		return fmt.Errorf("read lease %s: %w", e.key, err)
	}
	obs := e.observe(seen.rev, time.Now())
	acquired := start
	switch rec := seen.rec; {
	case rec != nil && rec.Released:
		// Given up on a clean stop: free at once.
	case rec != nil && rec.Run == e.run:
		acquired = rec.AcquiredAt
	case rec != nil && rec.Holder == e.cfg.Identity && !before.held:
		// Held by this replica's identity, by a run that is not this
		// Elector's, before this Elector ever held it: the run before this
		// process (a container restarted in its pod), killed before it
		// could release. It is not coming back; waiting out its lease
		// would only delay the restart, as client-go's rule for a
		// holder's own identity says.
		e.log.Info("taking the lease back from this replica's previous run", "run", rec.Run, "renewed", rec.RenewedAt)
	case rec == nil && e.Leading() && before.own:
		// Vanished under this leader, which still holds it by its own
		// clock: the standbys wait it out, so write it back.
		acquired = before.acquired
	case e.Leading() || time.Since(obs.at) < rec.lease(e.cfg.LeaseDuration):
		holder := "nobody: the key vanished"
		if rec != nil {
			holder = rec.Holder
		}
		return fmt.Errorf("%w: %s (revision %d)", ErrHeld, holder, seen.rev)
	}
	rev, err := e.kv.Update(ctx, e.key, e.encode(acquired, start, false), seen.rev)
	if err != nil {
		return fmt.Errorf("write lease %s: %w", e.key, err)
	}
	e.observeOwn(rev, start, acquired)
	return nil
}

// renewOwn renews the lease in one request when the last revision this
// replica saw is its own write: the compare-and-set on that revision
// succeeds only if nobody wrote the lease since, which is all a read
// first would have learned. Half the requests of a read and a write, four
// times a second across the all-in-one's stages. Any failure
// leaves the decision to the read.
func (e *Elector) renewOwn(ctx context.Context, start time.Time) bool {
	e.mu.Lock()
	obs := e.observed
	e.mu.Unlock()
	if !obs.own {
		return false
	}
	rev, err := e.kv.Update(ctx, e.key, e.encode(obs.acquired, start, false), obs.rev)
	if err != nil {
		return false
	}
	e.observeOwn(rev, start, obs.acquired)
	return true
}

// release marks the lease released, by compare-and-set if it is still
// ours, so that a standby takes over at once rather than after the lease
// duration. It is not deleted: a key that vanishes is waited out.
func (e *Elector) release(ctx context.Context) error {
	e.mu.Lock()
	obs := e.observed
	e.mu.Unlock()
	now := time.Now()
	rev, err := e.kv.Update(ctx, e.key, e.encode(obs.acquired, now, true), obs.rev)
	if err != nil {
		return err
	}
	e.observe(rev, now) // no longer held, even by this replica
	return nil
}

func (e *Elector) encode(acquired, renewed time.Time, released bool) []byte {
	b, _ := json.Marshal(record{Holder: e.cfg.Identity, Run: e.run, LeaseMillis: e.cfg.LeaseDuration.Milliseconds(),
		AcquiredAt: acquired.UTC(), RenewedAt: renewed.UTC(), Released: released})
	return b
}

// observe notes revision rev, seen at at, unless it was seen before: a
// standby counts from its first sight.
func (e *Elector) observe(rev uint64, at time.Time) observation {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rev != e.observed.rev {
		e.observed = observation{rev: rev, at: at, held: e.observed.held}
	}
	e.lastContact = time.Now()
	return e.observed
}

// observeOwn records revision rev as this replica's own write, holding
// since acquired.
func (e *Elector) observeOwn(rev uint64, at, acquired time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed = observation{rev: rev, at: at, own: true, acquired: acquired, held: true}
	e.lastContact = time.Now()
}
