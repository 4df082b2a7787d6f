package dnsprovider_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// inmemorySpec is a DNSProvider of one in-memory zone.
func inmemorySpec(zone string) map[string]any {
	return map[string]any{"provider": "inmemory", "settings": map[string]any{"inmemory-zone": zone}}
}

// Two replicas of the applier on one bus: each declared provider's applier
// runs in one of them only (its own lease); when that replica stops, the
// other takes its providers over.
func TestTwoReplicasApplyEachProviderOnce(t *testing.T) {
	w := startWorld(t)
	w.namespace(t, "team-a")
	stop1 := w.startController(t, "replica-1")
	w.startController(t, "replica-2")
	names := []string{"p1", "p2", "p3", "p4"}
	for _, n := range names {
		w.provider(t, "team-a", n, inmemorySpec(n+".example.org"))
	}
	for _, n := range names {
		w.waitReady(t, "team-a", n, "True", "ProviderReady")
	}
	time.Sleep(time.Second) // a second applier, were there one, would have started by now
	starts := func(replica, provider string) int {
		n := 0
		for _, line := range strings.Split(w.logs.String(), "\n") {
			if strings.Contains(line, `msg="applier starting"`) && strings.Contains(line, "replica="+replica+" ") &&
				strings.Contains(line, "provider="+provider+" ") {
				n++
			}
		}
		return n
	}
	on1 := 0
	for _, n := range names {
		p := events.DeclaredProvider("team-a", n)
		s1, s2 := starts("replica-1", p), starts("replica-2", p)
		if s1+s2 != 1 {
			t.Fatalf("%s: applier started %d times on replica-1, %d on replica-2", p, s1, s2)
		}
		on1 += s1
	}
	t.Logf("replica-1 runs %d of %d declared providers", on1, len(names))

	stop1()
	for _, n := range names {
		p := events.DeclaredProvider("team-a", n)
		eventually(t, 30*time.Second, func() bool { return starts("replica-2", p) == 1 },
			func() string { return p + " not taken over by replica-2" })
		if zl := w.zoneList(t, p); zl == nil || !slices.Equal(zl.Zones, []string{n + ".example.org"}) {
			t.Fatalf("%s zone list after the take-over: %s", p, dump(zl))
		}
	}
	for _, n := range names {
		w.waitReady(t, "team-a", n, "True", "ProviderReady")
	}
}
