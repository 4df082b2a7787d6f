package projection_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/projection/projectiontest"
)

// BenchmarkMemoryPerName reports the heap the projection holds per name:
// each name wanted by one object, held with its ownership record, written
// by one plan with its result. The recent-plan and -result memories are
// bounded and counted in.
func BenchmarkMemoryPerName(b *testing.B) {
	const names = 20000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := projection.New(projection.Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "default"}})
		projectiontest.Fill(p, names)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if p.Len() != names {
			b.Fatalf("%d names, want %d", p.Len(), names)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/names, "bytes/name")
		runtime.KeepAlive(p)
	}
}

// BenchmarkLookAtRest is the portal's periodic look (every 10 s at most)
// and the counts it exports, on 20,000 names at rest.
func BenchmarkLookAtRest(b *testing.B) {
	p := projection.New(projection.Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "default"}})
	projectiontest.Fill(p, 20000)
	for b.Loop() {
		p.Reevaluate()
		p.Counts()
	}
}
