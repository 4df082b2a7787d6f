package kubestatus

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// BenchmarkBookMemory measures what the collector keeps per name: one
// object of this cluster wanting it, the provider holding it and its
// ownership TXT (two observed names). It reports the bytes kept per
// wanted name (the time per op includes two forced GCs).
func BenchmarkBookMemory(b *testing.B) {
	const names = 10000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		bk := newBook(ownsEU, registry.Settings{OwnerID: "me"})
		for i := range names {
			name := fmt.Sprintf("host-%d.example.org", i)
			obj := events.ObjectRef{Cluster: "eu", Source: "service", Namespace: "default", Name: fmt.Sprintf("svc-%d", i)}
			ep := a(name, fmt.Sprintf("10.0.%d.%d", i/256, i%256))
			bk.setDesired(desired(name, obj, ep))
			bk.setObserved(observed("bind", name, ep))
			bk.setObserved(observed("bind", "a-"+name, txt("a-"+name, "heritage=external-dns,external-dns/owner=me,external-dns/resource=service/default/svc")))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(bk.objects) != names {
			b.Fatalf("%d objects tracked, want %d", len(bk.objects), names)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/names, "bytes/name")
		runtime.KeepAlive(bk)
	}
}
