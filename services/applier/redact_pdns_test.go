package applier_test

import (
	"flag"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/stage"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// TestPDNSAPIKeyNeverLeavesTheApplier: the pdns provider puts the body of
// a failed answer into its error. Behind a proxy whose error page echoes
// the request (its X-API-Key header, and the key once more in plain
// text), a failed PATCH leaves the key in neither the bus nor the log:
// the header is masked by name, the plain key as the value of
// --pdns-api-key.
func TestPDNSAPIKeyNeverLeavesTheApplier(t *testing.T) {
	s := pdnsenv.StartT(t, zone)
	js := bus(t)
	target, _ := url.Parse(s.APIURL)
	srv := echoingServer(httputil.NewSingleHostReverseProxy(target),
		func(r *http.Request) bool { return r.Method == http.MethodGet }, "the key was "+s.APIKey)
	defer srv.Close()

	var cfg applier.Config
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := stage.Parse(fs, []string{"--provider=pdns", "--pdns-server=" + srv.URL, "--pdns-server-id=" + pdnsenv.ServerID,
		"--pdns-api-key=" + s.APIKey, "--interval=1h"}); err != nil {
		t.Fatal(err)
	}
	cfg.PDNS.RetryConfig = pdnsConfig(s, 0).PDNS.RetryConfig // one quick retry
	log, logged := capturedLogger()
	a, err := applier.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	run(t, js, a)
	sendPlanTo(t, js, pdns.Name, &events.Plan{ID: "leak2", Provider: pdns.Name, Zone: zone, Changes: []events.Change{
		{New: ep("www.example.org", "A", "192.0.2.1")},
	}})
	res, _ := waitResultOf(t, js, pdns.Name, "leak2")
	if res.Status != events.ResultFailed || !strings.Contains(res.Error, "500") {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(res.Error, "X-API-Key: "+provider.Mask) {
		t.Errorf("the result's error is not masked: %q", res.Error)
	}
	waitFor(t, "the failure logged", func() bool { return strings.Contains(logged.String(), "plan not fully applied") })
	assertNoSecret(t, "the bus", busText(t, js), s.APIKey)
	assertNoSecret(t, "the log", logged.String(), s.APIKey)
}
