package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/projection/projectiontest"
	"github.com/zonestream/zonestream/services/portal/web"
)

// navigationTiming is the browser's own measure of the last page load:
// from the request to the end of its load event, in milliseconds. (The
// time chromedp takes to notice includes its own waiting.)
const navigationTiming = `(() => { const n = performance.getEntriesByType("navigation")[0]; return n.loadEventEnd - n.startTime; })()`

// BenchmarkPageLoadInChromium loads the page with 10,000 names in a real
// headless chromium, until its load event: the first 500 names as the
// page shows them, and all 10,000 (?limit=10000).
func BenchmarkPageLoadInChromium(b *testing.B) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		b.Fatal("no chromium on PATH: apt-get install chromium (hack/test.sh does)")
	}
	p := projection.New(projection.Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "default"}})
	projectiontest.Fill(p, 10000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	noHistory := func(context.Context, string) ([]history.Entry, error) { return nil, nil }
	srv := httptest.NewServer(web.New(ctx, p, noHistory, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	bctx, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox)...)
	defer cancel()
	bctx, cancel = chromedp.NewContext(bctx)
	defer cancel()
	for _, c := range []struct{ name, query string }{{"first-500", ""}, {"all-10000", "?limit=10000"}} {
		b.Run(c.name, func(b *testing.B) {
			var total float64
			for b.Loop() {
				if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/"+c.query)); err != nil {
					b.Fatal(err)
				}
				ms, err := chromedp.Run(bctx, chromedp.Evaluate[float64](navigationTiming))
				if err != nil {
					b.Fatal(err)
				}
				total += ms
			}
			b.ReportMetric(total/float64(b.N), "ms/load")
		})
	}
}
