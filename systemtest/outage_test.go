package systemtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestProviderOutage stops each provider's real server for 30 s in the
// middle of a burst of Services and starts it again on the same port with
// the same data (for coredns, the etcd it is served from and written to). The applier must report not ready during the outage and
// ready after it, without ever exiting, and the server must end up
// answering every record of the burst.
func TestProviderOutage(t *testing.T) {
	const n, outage = 60, 30 * time.Second
	cluster := kube.StartT(t)
	for bi, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			t.Parallel()
			zone := "outage-" + bk.name + ".test"
			owner := "outage-" + bk.name
			from := bi * 1000 // Service names differ per backend: one cluster
			srv := bk.start(t, zone)
			bus := natsenv.StartT(t)
			tap := tapPlans(t, bus.ClientURL())
			ops := loopback.Addr(t)
			// The applier's metrics address is the last flag, so it wins
			// over the common one.
			startStages(t, bus.ClientURL(), cluster, owner, srv.flags(owner), "--interval=2s", "--metrics-address="+ops)
			waitUntil(t, "applier ready", time.Minute, func() error { return ready(ops) })

			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			if err := createServices(ctx, cluster.Client, zone, from, from+n/2); err != nil {
				t.Fatal(err)
			}
			// Mid-burst: the first half is on its way, the second not
			// created yet.
			if err := srv.Halt(); err != nil {
				t.Fatal(err)
			}
			down := time.Now()
			var sawNotReady atomic.Bool
			watchCtx, stopWatch := context.WithCancel(ctx)
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for watchCtx.Err() == nil {
					if err := ready(ops); err != nil {
						sawNotReady.Store(true)
					}
					select {
					case <-watchCtx.Done():
					case <-time.After(250 * time.Millisecond):
					}
				}
			}()
			if err := createServices(ctx, cluster.Client, zone, from+n/2, from+n); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(down.Add(outage)))
			stopWatch()
			<-watched
			if !sawNotReady.Load() {
				t.Errorf("the applier stayed ready through a %s outage", outage)
			}
			if err := srv.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s down for %s, restarted", bk.name, time.Since(down).Round(time.Second))

			restarted := time.Now()
			waitUntil(t, "every record of the burst served", 2*time.Minute, func() error {
				if wrong := wrongServices(srv, zone, owner, from, from+n); len(wrong) > 0 {
					return errors.New(summarize(wrong))
				}
				return nil
			})
			// The same applier process answers ready again: it never exited.
			waitUntil(t, "applier ready after the outage", time.Minute, func() error { return ready(ops) })
			tap.mu.Lock()
			deletes := tap.deletes
			tap.mu.Unlock()
			if len(deletes) > 0 {
				t.Errorf("plans deleted %d wanted records, e.g. %v", len(deletes), head(deletes))
			}
			t.Logf("%d Services converged %s after the restart", n, time.Since(restarted).Round(time.Millisecond))
		})
	}
}
