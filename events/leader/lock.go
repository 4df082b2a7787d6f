package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// record is a lease's value, JSON so that `nats kv get ZS_LEASES KEY`
// reads it. Holder and Run say who holds it; Run alone tells this
// replica's own lease from another's.
type record struct {
	Holder      string    `json:"holder"`
	Run         string    `json:"run"`
	LeaseMillis int64     `json:"leaseMillis"`
	AcquiredAt  time.Time `json:"acquiredAt"`
	RenewedAt   time.Time `json:"renewedAt"`
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
// there, never from the holder's clock.
type observation struct {
	rev uint64
	at  time.Time
	own bool // this replica wrote it
	// acquired is when this replica took the lease, while own.
	acquired time.Time
}

// tryAcquireOrRenew takes the lease if it is free or has not changed for
// its lease duration, or renews it if it is ours, by compare-and-set on
// its revision: of replicas trying at once, one wins. start is when the
// attempt began: a renewal holds from then, never from its answer.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, start time.Time) error {
	if e.renewOwn(ctx, start) {
		return nil
	}
	entry, err := e.kv.Get(ctx, e.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		rev, err := e.kv.Create(ctx, e.key, e.encode(start, start))
		if err != nil {
			return fmt.Errorf("create lease %s: %w", e.key, err)
		}
		e.observeOwn(rev, start, start)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read lease %s: %w", e.key, err)
	}
	var rec *record
	if json.Unmarshal(entry.Value(), &rec) != nil {
		rec = nil // unreadable: a foreign holder, waited out like any other
	}
	obs := e.observe(entry.Revision(), time.Now())
	ours := rec != nil && rec.Run == e.run
	if !ours && (e.Leading() || time.Since(obs.at) < rec.lease(e.cfg.LeaseDuration)) {
		holder := "?"
		if rec != nil {
			holder = rec.Holder
		}
		return fmt.Errorf("%w: %s (revision %d)", ErrHeld, holder, entry.Revision())
	}
	acquired := start
	if ours {
		acquired = rec.AcquiredAt
	}
	rev, err := e.kv.Update(ctx, e.key, e.encode(acquired, start), entry.Revision())
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
// times a second across the all-in-one's stages (issue 11). Any failure
// leaves the decision to the read.
func (e *Elector) renewOwn(ctx context.Context, start time.Time) bool {
	e.mu.Lock()
	obs := e.observed
	e.mu.Unlock()
	if !obs.own {
		return false
	}
	rev, err := e.kv.Update(ctx, e.key, e.encode(obs.acquired, start), obs.rev)
	if err != nil {
		return false
	}
	e.observeOwn(rev, start, obs.acquired)
	return true
}

// release deletes the lease if it is still ours, so that a standby takes
// over at once rather than after the lease duration.
func (e *Elector) release(ctx context.Context) error {
	e.mu.Lock()
	rev := e.observed.rev
	e.mu.Unlock()
	return e.kv.Delete(ctx, e.key, jetstream.LastRevision(rev))
}

func (e *Elector) encode(acquired, renewed time.Time) []byte {
	b, _ := json.Marshal(record{Holder: e.cfg.Identity, Run: e.run, LeaseMillis: e.cfg.LeaseDuration.Milliseconds(),
		AcquiredAt: acquired.UTC(), RenewedAt: renewed.UTC()})
	return b
}

// observe notes revision rev, seen at at, unless it was seen before: a
// standby counts from its first sight.
func (e *Elector) observe(rev uint64, at time.Time) observation {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rev != e.observed.rev {
		e.observed = observation{rev: rev, at: at}
	}
	e.lastContact = time.Now()
	return e.observed
}

// observeOwn records revision rev as this replica's own write, holding
// since acquired.
func (e *Elector) observeOwn(rev uint64, at, acquired time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed = observation{rev: rev, at: at, own: true, acquired: acquired}
	e.lastContact = time.Now()
}
