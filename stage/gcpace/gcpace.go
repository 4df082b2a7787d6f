// Package gcpace has the garbage collector run when there is garbage:
// when the heap has grown by itself, and once when a burst of work ends,
// never on a clock.
//
// The Go runtime collects when the heap has doubled since the last
// collection (GOGC=100), and also every two minutes whatever was
// allocated. A controller at rest allocates little, so that timed
// collection finds little to free, yet it marks the whole live heap: at
// 20,000 names 0.23 CPU-seconds, nearly all the stages cost at rest. Start
// turns the runtime's own trigger off and sets a memory limit where
// GOGC=100 would collect, moved after every collection (limit.go), so a
// busy process collects as often as before. The timed collection did one
// more thing: after a burst it found the live heap again, so that the
// goal and the memory kept followed it down. The quiet watcher does that,
// once per burst (quiet.go).
//
// The operator's settings win: with GOGC or GOMEMLIMIT in the
// environment, Start leaves the runtime as they configured it.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Configured reports whether the environment sets how the runtime
// collects (GOGC or GOMEMLIMIT); Start then does nothing.
func Configured() bool {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	return gogc || limit
}

// Start paces collection unless Configured, and reports whether it did;
// stop restores the runtime's settings.
func Start(opts ...Option) (stop func(), started bool) {
	if Configured() {
		return func() {}, false
	}
	o := options{tick: defaultTick}
	for _, opt := range opts {
		opt(&o)
	}
	p := &pacer{done: make(chan struct{})}
	p.percent = debug.SetGCPercent(-1)
	p.limit = debug.SetMemoryLimit(Limit())
	p.arm()
	p.wg.Go(func() { p.watchQuiet(o.tick) })
	return p.stop, true
}

type pacer struct {
	stopped atomic.Bool
	done    chan struct{}
	wg      sync.WaitGroup
	percent int
	limit   int64
}

// sentinel is an object only a collection frees, so that its cleanup
// runs after each one. Its pointer keeps it out of the tiny allocator,
// whose blocks other objects keep alive.
type sentinel struct{ _ *byte }

// arm has collected called after the next collection.
func (p *pacer) arm() { runtime.AddCleanup(new(sentinel), (*pacer).collected, p) }

// collected moves the limit to the heap the collection left, and waits
// for the next one.
func (p *pacer) collected() {
	if p.stopped.Load() {
		return
	}
	debug.SetMemoryLimit(Limit())
	p.arm()
}

func (p *pacer) stop() {
	if p.stopped.Swap(true) {
		return
	}
	close(p.done)
	p.wg.Wait()
	debug.SetGCPercent(p.percent)
	debug.SetMemoryLimit(p.limit)
}
