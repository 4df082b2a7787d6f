package gcpace

import "time"

// Option changes how Start paces collection.
type Option func(*options)

type options struct {
	tick time.Duration
}

// defaultTick is how often the quiet watcher looks at what was allocated.
const defaultTick = 10 * time.Second

// WithTick sets how often the quiet watcher looks at what was allocated:
// a burst has ended after one tick that allocated little (default 10s).
func WithTick(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.tick = d
		}
	}
}
