// Package retry is the one retry backoff every service uses: a wait that
// doubles from a base to a cap, with optional jitter so that restarted
// services don't retry in step. It is process plumbing, not part of the
// event contract, so it lives beside events rather than in it.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry number attempt (0 for the first): base
// doubled attempt times, at most limit.
func Delay(base, limit time.Duration, attempt int) time.Duration {
	d := base
	for i := 0; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Jitter spreads d over [d/2, d].
func Jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// Backoff counts the failures in a row of one retried operation.
type Backoff struct {
	Base, Max time.Duration
	Jitter    bool // spread each wait over its upper half
	attempt   int
}

// Next returns the wait before the next retry and counts a failure.
func (b *Backoff) Next() time.Duration {
	d := Delay(b.Base, b.Max, b.attempt)
	b.attempt++
	if b.Jitter {
		d = Jitter(d)
	}
	return d
}

// Reset starts again from Base after a success.
func (b *Backoff) Reset() { b.attempt = 0 }

// Wait sleeps for d, or until ctx ends; it reports whether the full wait
// passed.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
