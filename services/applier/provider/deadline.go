package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zonestream/zonestream/events"
)

// ErrTimeout is wrapped by the error of a provider call abandoned at its
// deadline (Bounded). It is transient: the provider may answer next time.
var ErrTimeout = errors.New("provider call abandoned at its deadline")

// Bounded runs call in a goroutine of its own under a context that ends
// at timeout, or when ctx does, and returns what call returns, or at that
// moment an error: one wrapping ErrTimeout at the deadline, ctx's error
// when ctx ended first. The caller never waits longer, whatever call does
// with its context (a provider library that runs under
// context.Background(), an SDK without a response timeout); call is left
// to finish alone, and what it returns then is dropped. Its context has
// ended by then, so every request it sends under it is refused. A timeout
// of 0 or less bounds nothing but ctx.
func Bounded[T any](ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	var cctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		cctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w (after %s): %w", ErrTimeout, timeout, context.DeadlineExceeded))
	} else {
		cctx, cancel = context.WithCancel(ctx)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // the abandoned call's send never blocks
	go func() {
		defer cancel()
		v, err := call(cctx)
		done <- result{v, err}
	}()
	finished := func(r result) (T, error) {
		if cause := context.Cause(cctx); r.err != nil && ctx.Err() == nil && errors.Is(cause, ErrTimeout) {
			// The call saw its deadline first (an HTTP client's request
			// cut off): the same timeout, said the same way.
			return r.v, fmt.Errorf("%w: %w", cause, r.err)
		}
		return r.v, r.err
	}
	select {
	case r := <-done:
		return finished(r)
	case <-cctx.Done():
		// A call that returned has sent its result before its context
		// was cancelled behind it: a fast call is never taken for an
		// abandoned one.
		select {
		case r := <-done:
			return finished(r)
		default:
		}
		var zero T
		if ctx.Err() != nil {
			return zero, ctx.Err() // shutdown or a lost lease, not the provider's fault
		}
		return zero, context.Cause(cctx)
	}
}

// Deadline returns p with every call (Zones, Records, RecordsAt, Apply)
// Bounded by timeout (--provider-timeout), so that a provider that
// accepts a connection and never answers cannot hold the applier's loop,
// its shutdown or a deposed leader's stop. timedOut, if set, is told of
// each call abandoned at its deadline. A timeout of 0 or less returns p
// itself.
func Deadline(p Provider, timeout time.Duration, timedOut func(op string, err error)) Provider {
	if timeout <= 0 {
		return p
	}
	d := &deadline{p: p, timeout: timeout, timedOut: timedOut}
	if r, ok := p.(NameReader); ok {
		return &deadlineReader{deadline: d, r: r}
	}
	return d
}

type deadline struct {
	p        Provider
	timeout  time.Duration
	timedOut func(op string, err error)
}

// noted tells timedOut of err when it is the deadline's.
func (d *deadline) noted(op string, err error) error {
	if errors.Is(err, ErrTimeout) && d.timedOut != nil {
		d.timedOut(op, err)
	}
	return err
}

func (d *deadline) Zones(ctx context.Context) ([]string, error) {
	zones, err := Bounded(ctx, d.timeout, d.p.Zones)
	return zones, d.noted("zones", err)
}

func (d *deadline) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	eps, err := Bounded(ctx, d.timeout, func(ctx context.Context) ([]events.Endpoint, error) {
		return d.p.Records(ctx, zone)
	})
	return eps, d.noted("records", err)
}

func (d *deadline) Apply(ctx context.Context, zone string, changes []events.Change) error {
	_, err := Bounded(ctx, d.timeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.p.Apply(ctx, zone, changes)
	})
	return d.noted("apply", err)
}

// deadlineReader is deadline for a NameReader: only a provider that can
// read names claims to.
type deadlineReader struct {
	*deadline
	r NameReader
}

func (d *deadlineReader) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, err := Bounded(ctx, d.timeout, func(ctx context.Context) ([]events.Endpoint, error) {
		return d.r.RecordsAt(ctx, zone, names)
	})
	return eps, d.noted("records_at", err)
}
