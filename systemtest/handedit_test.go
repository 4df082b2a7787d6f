package systemtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestHandEdits edits, on each provider's real server, a record
// zonestream owns (it must be put back after the next full listing) and
// keeps a record it does not own at another name (it must never change).
func TestHandEdits(t *testing.T) {
	const n, interval = 3, 2 * time.Second
	cluster := kube.StartT(t)
	for bi, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			t.Parallel()
			zone := "edit-" + bk.name + ".test"
			owner := "edit-" + bk.name
			from := 5000 + bi*1000
			srv := bk.start(t, zone)
			manual := "manual." + zone
			if err := srv.plantA(manual, "192.0.2.77"); err != nil {
				t.Fatal(err)
			}
			bus := natsenv.StartT(t)
			startStages(t, bus.ClientURL(), cluster, owner, srv.flags(owner), "--interval="+interval.String())

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := createServices(ctx, cluster.Client, zone, from, from+n); err != nil {
				t.Fatal(err)
			}
			served := func() error {
				if wrong := wrongServices(srv, zone, owner, from, from+n); len(wrong) > 0 {
					return fmt.Errorf("%s", summarize(wrong))
				}
				return nil
			}
			waitUntil(t, "the Services' records", time.Minute, served)

			edited := fmt.Sprintf("svc-%d.%s", from, zone)
			if err := srv.editA(edited, burstIP(from), "192.0.2.200"); err != nil {
				t.Fatal(err)
			}
			// Read at once: the repair waits for the next full listing.
			if got := answersOf(srv, edited, dns.TypeA); !slices.Equal(got, []string{"192.0.2.200"}) {
				t.Fatalf("the hand edit did not take: %s A %v", edited, got)
			}
			edit := time.Now()
			waitUntil(t, "the hand-edited record repaired", time.Minute, served)
			t.Logf("%s repaired %s after the edit", edited, time.Since(edit).Round(time.Millisecond))

			// Several full listings later the unowned record is as planted,
			// and zonestream wrote no ownership record for it.
			time.Sleep(3 * interval)
			if got := answersOf(srv, manual, dns.TypeA); !slices.Equal(got, []string{"192.0.2.77"}) {
				t.Errorf("unowned %s A changed: %v", manual, got)
			}
			if srv.untouched != nil {
				if err := srv.untouched(manual, "192.0.2.77"); err != nil {
					t.Errorf("unowned %s changed in the store: %v", manual, err)
				}
			}
			for _, txt := range []string{manual, "a-" + manual} {
				if got := answersOf(srv, txt, dns.TypeTXT); len(got) > 0 {
					t.Errorf("zonestream wrote %s TXT %v for a record it does not own", txt, got)
				}
			}
			if err := served(); err != nil {
				t.Errorf("after the repair: %v", err)
			}
		})
	}
}
