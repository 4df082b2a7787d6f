package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryConfig is how a provider bounds and retries its exchanges with the
// server; every provider's Config embeds it.
type RetryConfig struct {
	// Timeout bounds one exchange with the server (default 10s).
	Timeout time.Duration
	// Retries is how often a transient failure is retried (default 3;
	// negative: none).
	Retries int
	// RetryBackoff is the first retry's delay, doubled each time, with
	// jitter (default 250ms).
	RetryBackoff time.Duration
}

// Defaults fills what is unset (RetryDefaults).
func (r *RetryConfig) Defaults() { RetryDefaults(&r.Timeout, &r.Retries, &r.RetryBackoff) }

// RetryDefaults fills unset retry settings: 10s per attempt, 3 retries
// after the first attempt (a negative count means none) and 250ms before
// the first retry. timeout may be nil, for a provider with timeouts of its
// own.
func RetryDefaults(timeout *time.Duration, retries *int, backoff *time.Duration) {
	if timeout != nil && *timeout <= 0 {
		*timeout = 10 * time.Second
	}
	if *retries < 0 {
		*retries = 0
	} else if *retries == 0 {
		*retries = 3
	}
	if *backoff <= 0 {
		*backoff = 250 * time.Millisecond
	}
}

// Retry runs attempt until it succeeds, fails for good (ErrStale,
// ErrPermanent), ctx ends or the retries are used up, waiting backoff,
// doubled each time, plus up to half again of jitter so that appliers
// restarted together do not retry in step. onRetry, if set, is told of
// each retry before its wait.
func Retry(ctx context.Context, retries int, backoff time.Duration,
	onRetry func(attempt int, wait time.Duration, last error), attempt func() error) error {
	var last error
	for i := 0; i <= retries; i++ {
		if i > 0 {
			d := backoff << (i - 1)
			d += time.Duration(rand.Int64N(int64(d)/2 + 1))
			if onRetry != nil {
				onRetry(i+1, d, last)
			}
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), last)
			case <-time.After(d):
			}
		}
		err := attempt()
		if err == nil || errors.Is(err, ErrStale) || errors.Is(err, ErrPermanent) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		last = err
	}
	return fmt.Errorf("giving up after %d attempts: %w", retries+1, last)
}
