package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/zonestream/zonestream/stage/gcpace/gcpacetest"
)

const mib = 1 << 20

func start(t *testing.T) {
	t.Helper()
	gcpacetest.Unconfigured(t)
	stop, started := Start()
	if !started {
		t.Fatal("Start did nothing on a runtime nobody configured")
	}
	t.Cleanup(stop)
}

// currentLimit reads the memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// waitLimit waits for the limit to satisfy ok after a collection: the
// pacer moves it from the collection's cleanups, a moment later.
func waitLimit(t *testing.T, what string, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(currentLimit()) {
		// A cleanup arms the next collection's from its own goroutine: a
		// collection that ends before it did moves the limit only at the
		// one after.
		runtime.GC()
		if time.Now().After(deadline) {
			t.Fatalf("memory limit %d MiB after a collection: want %s", currentLimit()/mib, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return currentLimit()
}

func liveHeap(mb int) [][]byte {
	held := make([][]byte, mb)
	for i := range held {
		held[i] = make([]byte, mib)
		held[i][0] = 1
	}
	return held
}

func TestStartLeavesAConfiguredRuntimeAlone(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(name, func(t *testing.T) {
			gcpacetest.Unconfigured(t)
			t.Setenv(name, map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}[name])
			percent, limit := debug.SetGCPercent(-1), currentLimit()
			debug.SetGCPercent(percent)
			stop, started := Start()
			defer stop()
			if started {
				t.Fatalf("Start paced collection although %s is set", name)
			}
			if got := debug.SetGCPercent(percent); got != percent {
				t.Errorf("GOGC percent %d, want %d as configured", got, percent)
			}
			if got := currentLimit(); got != limit {
				t.Errorf("memory limit %d, want %d as configured", got, limit)
			}
		})
	}
}

// The limit ends where GOGC=100 would collect, and moves with the live
// heap at each collection, down as well as up.
func TestLimitFollowsTheLiveHeap(t *testing.T) {
	start(t)
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC percent %d while paced, want off (-1): the runtime would still collect every two minutes", got)
	}
	held := liveHeap(64)
	runtime.GC()
	limit := waitLimit(t, "about twice the 64 MiB held", func(l int64) bool { return l >= 128*mib })
	if limit > 128*mib+64*mib {
		t.Errorf("memory limit %d MiB with 64 MiB live, want at most %d: as GOGC=100 plus the runtime's own", limit/mib, 192)
	}
	runtime.KeepAlive(held)
	held = nil
	runtime.GC()
	waitLimit(t, "below 64 MiB once the heap is released", func(l int64) bool { return l < 64*mib })
}

// A busy process collects about as often as at GOGC=100 and holds about
// as much: the heap's growth still starts collections. (GOGC=100 itself is
// no steady yardstick in a loop this tight: its peak moved from 105 to 509
// MiB between runs, where the runtime lets assists off.)
func TestGrowthStillStartsCollections(t *testing.T) {
	start(t)
	held := liveHeap(32)
	defer runtime.KeepAlive(held)
	runtime.GC()
	waitLimit(t, "about twice the 32 MiB held", func(l int64) bool { return l >= 64*mib })
	cycles, peak := churn()
	t.Logf("1 GiB allocated on 32 MiB live: %d collections, heap objects at most %d MiB", cycles, peak/mib)
	// GOGC=100 collects once per 32 MiB allocated here: 32 times.
	if cycles < 16 || cycles > 64 {
		t.Errorf("%d collections while 1 GiB was allocated on 32 MiB live, want about 32 (16 to 64)", cycles)
	}
	if peak > 128*mib {
		t.Errorf("heap objects peaked at %d MiB on 32 MiB live, want at most 128 MiB", peak/mib)
	}
}

// churn allocates 1 GiB of garbage in 64 KiB pieces, each written
// through as a program would, and returns the collections it caused and
// the peak of the heap's objects. (A loop that only allocates has the
// collector take most of the CPU: the runtime then lets the heap overshoot
// whatever sets its goal.)
func churn() (cycles, peak uint64) {
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(samples)
	before := samples[0].Value.Uint64()
	var sink []byte
	for i := range 1 << 14 {
		sink = make([]byte, 64<<10)
		for j := range sink {
			sink[j] = byte(j)
		}
		if i%16 == 0 {
			metrics.Read(samples)
			peak = max(peak, samples[1].Value.Uint64())
		}
	}
	runtime.KeepAlive(sink)
	metrics.Read(samples)
	return samples[0].Value.Uint64() - before, peak
}

// At rest nothing collects; after a burst, one collection finds the heap
// it left, and then nothing again.
func TestABurstEndsInOneCollection(t *testing.T) {
	const tick = 50 * time.Millisecond
	gcpacetest.Unconfigured(t)
	stop, started := Start(WithTick(tick))
	if !started {
		t.Fatal("Start did nothing on a runtime nobody configured")
	}
	defer stop()
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	time.Sleep(10 * tick)
	if n := forced() - before; n != 0 {
		t.Fatalf("%d collections at rest, want none", n)
	}
	var sink []byte
	for range 256 {
		sink = make([]byte, mib)
		sink[0] = 1
	}
	runtime.KeepAlive(sink)
	time.Sleep(10 * tick)
	if n := forced() - before; n != 1 {
		t.Fatalf("%d collections after a burst of 256 MiB and %s at rest, want 1", n, 10*tick)
	}
	time.Sleep(10 * tick)
	if n := forced() - before; n != 1 {
		t.Fatalf("%d collections after the burst's, at rest, want none", n-1)
	}
}
