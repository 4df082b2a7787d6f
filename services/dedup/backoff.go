package dedup

import (
	"math/rand/v2"
	"time"
)

// backoff doubles from 200ms to 30s, with jitter so that restarted services
// don't retry in step.
type backoff struct{ cur time.Duration }

func newBackoff() *backoff { return &backoff{} }

func (b *backoff) next() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = 200 * time.Millisecond
	case b.cur < 30*time.Second:
		b.cur *= 2
	}
	return b.cur/2 + rand.N(b.cur/2+1)
}

func (b *backoff) reset() { b.cur = 0 }
