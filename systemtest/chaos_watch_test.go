package systemtest

import (
	"slices"
	"sync"
	"time"

	"github.com/zonestream/zonestream/testenv/bind"
)

// watchZone transfers the zone twice a second while a trial runs and
// notes every record of keep (the stable Services, their ownership, the
// planted record, the zone's own) that is ever missing. It sees from DNS
// what the plan tap sees from the bus: a wanted record deleted, even for a
// moment, whatever plan did it. stop ends the watch and returns what went
// missing, once each.
func watchZone(ns *bind.Server, zone string, keep []string) (stop func() []string) {
	var (
		mu      sync.Mutex
		missing = map[string]bool{}
		quit    = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			// A failed transfer says nothing about the records: skip it
			// (BIND is never a victim; the convergence check reports it).
			if got, err := transferZone(ns, zone); err == nil {
				m, _ := diff(keep, got)
				mu.Lock()
				for _, r := range m {
					missing[r] = true
				}
				mu.Unlock()
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() []string {
		close(quit)
		<-done
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for r := range missing {
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
}
