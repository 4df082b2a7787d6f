// Package leader elects, among the replicas of one stage instance, the
// one that works: it holds a lease in the bus' KV bucket ZS_LEASES
// (events.BucketLeases), renewed by compare-and-set on the key's
// revision; the others stand by and take over when it is released or
// left unrenewed for its lease duration.
//
// Why a lease on the bus rather than JetStream consumer priority groups:
// only the applier reads through a durable consumer; the collector, dedup
// and planner follow streams with ordered consumers (events.Watch), which
// have no groups to pin, and the collector must not fight over its marks.
// A lease is one mechanism for all four, needs no Kubernetes token (dedup,
// planner and applier have none), and is allowed per identity by NATS
// permissions like any other subject. A standby keeps no state warm:
// taking over is the restart each stage already survives (a new run
// trusts no completeness mark from history, the planner drops the plans
// of the run before it), and rebuilding from the streams takes well under
// the lease duration.
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/events"
)

// Elector campaigns for one lease and runs the leader's work while it
// holds it.
type Elector struct {
	kv     jetstream.KeyValue
	stream jetstream.Stream // the bucket's, to tell a vanished key (read)
	key    string
	cfg    Config
	run    string // this Elector's own mark in the lease
	log    *slog.Logger

	mu          sync.Mutex
	observed    observation
	leading     bool
	lastContact time.Time // the bucket last answered
}

// New opens the lease bucket (events.EnsureLeases creates it) for lease
// key (events.DedupLease, ...).
func New(ctx context.Context, js jetstream.JetStream, key string, cfg Config, logger *slog.Logger) (*Elector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	kv, err := js.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		return nil, fmt.Errorf("leader election: bucket %s: %w", events.BucketLeases, err)
	}
	stream, err := js.Stream(ctx, events.LeaseStream)
	if err != nil {
		return nil, fmt.Errorf("leader election: stream %s: %w", events.LeaseStream, err)
	}
	leadingGauge.WithLabelValues(key).Set(0)
	return &Elector{kv: kv, stream: stream, key: key, cfg: cfg, run: nuid.Next(),
		log: logger.With("lease", key, "identity", cfg.Identity)}, nil
}

// Leading reports whether this replica holds the lease now.
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

// Healthy returns nil while the lease bucket has answered within a lease
// duration: a standby that cannot see the lease could not take over.
func (e *Elector) Healthy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.leading || time.Since(e.lastContact) < e.cfg.LeaseDuration {
		return nil
	}
	return fmt.Errorf("leader election: lease %s not read for %s", e.key, time.Since(e.lastContact).Round(time.Second))
}

// Run campaigns until ctx ends. Each time it acquires the lease it calls
// lead with a context that ends when the lease is lost, waits for lead to
// return, and campaigns again. When lead fails on its own (most often the
// bus in trouble: a JetStream node lost, a stream without a leader), the
// lease is given up, so that another replica may try, and this one
// campaigns again after a backoff rather than exit: a process restart
// would cost a whole lease duration. The lease is released when Run
// returns, which is only when ctx ends.
func (e *Elector) Run(ctx context.Context, lead func(context.Context) error) error {
	defer e.releaseIfHeld()
	failures := 0
	for {
		acquired, err := e.acquire(ctx)
		if err != nil {
			return err
		}
		began := time.Now()
		err = e.lead(ctx, acquired, lead)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			continue // the lease was lost; the work stopped when told
		}
		if time.Since(began) > e.cfg.LeaseDuration {
			failures = 0 // it had been working: a new trouble
		}
		failures++
		workFailuresTotal.WithLabelValues(e.key).Inc()
		e.releaseIfHeld()
		wait := failureBackoff(e.cfg, failures)
		e.log.Warn("campaigning again after the leader's work failed", "in", wait, "failures_in_a_row", failures)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// failureBackoff doubles from the retry period with each failure in a
// row, up to the lease duration.
func failureBackoff(cfg Config, failures int) time.Duration {
	d := cfg.RetryPeriod
	for i := 1; i < failures && d < cfg.LeaseDuration; i++ {
		d *= 2
	}
	return min(d, cfg.LeaseDuration)
}

// acquire tries every retry period until the lease is ours, and returns
// when the winning attempt began.
func (e *Elector) acquire(ctx context.Context) (time.Time, error) {
	e.log.Info("standing by for the lease")
	for {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
		err := e.tryAcquireOrRenew(actx, start)
		cancel()
		if err == nil {
			return start, nil
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if !lostRace(err) {
			e.log.Warn("could not read or take the lease; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(jitter(e.cfg.RetryPeriod)):
		}
	}
}

// lead runs work while the lease is renewed. It returns nil when the
// lease is lost, once work has returned; work's own error otherwise.
func (e *Elector) lead(ctx context.Context, renewed time.Time, work func(context.Context) error) error {
	e.setLeading(true)
	e.log.Info("acquired the lease: leading")
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- work(lctx) }()
	tick := time.NewTicker(e.cfg.RetryPeriod)
	defer tick.Stop()
	// The renew deadline ends the work on time even between two attempts.
	expiry := time.NewTimer(time.Until(renewed.Add(e.cfg.RenewDeadline)))
	defer expiry.Stop()
	for {
		select {
		case err := <-done:
			e.setLeading(false)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = ErrStopped
			}
			e.log.Error("the leader's work failed; giving the lease up", "err", err)
			return err
		case <-expiry.C:
			if ctx.Err() == nil {
				e.log.Warn("lost the lease: not renewed within the renew deadline; stopping work", "renewed", renewed)
				return e.stop(cancel, done)
			}
			continue // shutting down: work ends with ctx
		case <-tick.C:
		}
		start := time.Now()
		deadline := renewed.Add(e.cfg.RenewDeadline)
		rctx, rcancel := context.WithDeadline(ctx, deadline)
		err := e.tryAcquireOrRenew(rctx, start)
		rcancel()
		if err == nil {
			renewed = start
			expiry.Reset(time.Until(renewed.Add(e.cfg.RenewDeadline)))
			continue
		}
		if ctx.Err() != nil {
			continue // shutting down: work ends with ctx
		}
		if !errors.Is(err, ErrHeld) && time.Now().Before(deadline) {
			e.log.Warn("renewing the lease failed; trying again until the renew deadline", "err", err, "deadline", deadline)
			continue
		}
		e.log.Warn("lost the lease: stopping work", "err", err)
		return e.stop(cancel, done)
	}
}

// stop ends the deposed leader's work and waits for it: no campaign
// starts while it may still publish. It should end within the margin
// between renew deadline and lease duration; a warning says when not.
func (e *Elector) stop(cancel context.CancelFunc, done <-chan error) error {
	stopped := time.Now()
	cancel()
	margin := time.NewTimer(e.cfg.LeaseDuration - e.cfg.RenewDeadline)
	defer margin.Stop()
	select {
	case <-done:
	case <-margin.C:
		e.log.Error("the deposed leader's work did not stop within the lease's margin; another replica may have started")
		<-done
	}
	e.setLeading(false)
	e.log.Info("stopped leading", "took", time.Since(stopped).Round(time.Millisecond))
	return nil
}

func (e *Elector) setLeading(on bool) {
	e.mu.Lock()
	was := e.leading
	e.leading = on
	e.mu.Unlock()
	switch {
	case on && !was:
		leadingGauge.WithLabelValues(e.key).Set(1)
		transitionsTotal.WithLabelValues(e.key, "acquired").Inc()
	case !on && was:
		leadingGauge.WithLabelValues(e.key).Set(0)
		transitionsTotal.WithLabelValues(e.key, "lost").Inc()
	}
}

// releaseIfHeld gives the lease up if this replica wrote its last
// revision, on the way out.
func (e *Elector) releaseIfHeld() {
	e.mu.Lock()
	ours := e.observed.own
	e.mu.Unlock()
	if !ours {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RetryPeriod)
	defer cancel()
	if err := e.release(ctx); err != nil {
		e.log.Warn("could not release the lease; a standby takes over once it lapses", "err", err)
		return
	}
	transitionsTotal.WithLabelValues(e.key, "released").Inc()
	e.log.Info("released the lease")
}

// lostRace reports whether err says another replica has the lease, or
// wrote it first: nothing to warn about.
func lostRace(err error) bool {
	return errors.Is(err, ErrHeld) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

// jitter spreads the standbys' attempts over up to a fifth more than d, as
// client-go does.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}
