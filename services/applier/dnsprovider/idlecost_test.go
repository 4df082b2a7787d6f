package dnsprovider_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// The idle cost of declared providers: goroutines and live heap of the
// process before and after 20 in-memory DNSProviders are running (each
// listed every second here), and after they are deleted again, which must
// leave no goroutine of theirs behind.
func TestIdleCostOfDeclaredProviders(t *testing.T) {
	const n = 20
	w := startWorld(t)
	w.namespace(t, "team-a")
	w.startController(t, "replica-1")
	time.Sleep(time.Second)
	g0, h0 := idle()

	for i := range n {
		w.provider(t, "team-a", fmt.Sprintf("p%d", i), inmemorySpec(fmt.Sprintf("p%d.example.org", i)))
	}
	for i := range n {
		w.waitReady(t, "team-a", fmt.Sprintf("p%d", i), "True", "ProviderReady")
	}
	time.Sleep(2 * time.Second)
	eventually(t, 5*time.Second, func() bool { return metric(t, "zonestream_dnsproviders", map[string]string{"ready": "true"}) == n },
		func() string { return "zonestream_dnsproviders{ready=true} is not 20" })
	g1, h1 := idle()
	t.Logf("%d declared in-memory providers, idle: +%d goroutines (%.1f each), +%.0f KiB live heap (%.1f KiB each)",
		n, g1-g0, float64(g1-g0)/n, float64(int64(h1)-int64(h0))/1024, float64(int64(h1)-int64(h0))/1024/n)

	deleting := time.Now()
	for i := range n {
		w.deleteProvider(t, "team-a", fmt.Sprintf("p%d", i))
	}
	for i := range n {
		p := events.DeclaredProvider("team-a", fmt.Sprintf("p%d", i))
		eventually(t, 30*time.Second, func() bool { zl := w.zoneList(t, p); return zl != nil && zl.Scope == nil },
			func() string { return p + " not withdrawn" })
	}
	t.Logf("%d providers deleted -> every applier stopped and its zone list withdrawn: %s", n, time.Since(deleting))
	var g2 int
	eventually(t, 10*time.Second, func() bool { g2, _ = idle(); return g2 <= g0+2 },
		func() string {
			return fmt.Sprintf("goroutines %d after the providers went, %d before them:\n%s", g2, g0, strings.Join(ours(), "\n\n"))
		})
	t.Logf("after deleting them: %d goroutines (%d before)", g2, g0)
}

// idle is the goroutines of this process other than the embedded NATS
// server's (a process of its own in production), and the live heap (the
// server's included) after a collection.
func idle() (goroutines int, heap uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return len(ours()), ms.HeapAlloc
}

// ours are the stacks of the goroutines not of the NATS server.
func ours() []string {
	buf := make([]byte, 8<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "nats-server/v2/server.") {
			out = append(out, g)
		}
	}
	return out
}
