package gcpace

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// busyShare is the least a tick must allocate, as a share of the live
// heap, to be part of a burst. A process at rest allocates in steps too
// (the applier's listing every --interval, the bus reading a block): at
// 20,000 names about 15 MB at once per minute, a thirteenth of its live
// heap, as both grow with the names. A burst of changes allocates many
// times its heap.
const busyShare = 4

// minBusy is the least a tick must allocate to be part of a burst,
// whatever the heap: the bus reads blocks of up to 8 MB at any size.
const minBusy = 16 << 20

// watchQuiet collects once when a burst ends: after a tick that allocated
// much, the first tick that allocated little. That finds the live heap
// the burst left, so that Limit follows it down, as the runtime's timed
// collection did, and returns to the OS the memory the burst took, which
// the scavenger would keep up to the limit; but it does not collect again
// until the next burst: at rest, only the heap's growth starts a
// collection.
func (p *pacer) watchQuiet(tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	last, busy := value(samples[0]), false
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		metrics.Read(samples)
		allocated := value(samples[0]) - last
		last = value(samples[0])
		if allocated >= max(value(samples[1])/busyShare, minBusy) {
			busy = true
			continue
		}
		if busy {
			busy = false
			debug.FreeOSMemory()
			metrics.Read(samples) // the collection's own allocations are not the next tick's
			last = value(samples[0])
		}
	}
}
