package applier_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// TestWebhookCredentialsNeverLeaveTheApplier: a webhook URL with a user's
// password and a token in its query, and a webhook whose error pages echo
// the request (its URL, its Authorization header, the password): the plan
// fails, and none of them reaches the bus (every message of every stream)
// or the applier's log, its provider's lines included.
func TestWebhookCredentialsNeverLeaveTheApplier(t *testing.T) {
	const user, password, token = "zs-hook", "hook-pa55word", "tok-9f8e7d6c"
	js := bus(t)
	mem, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{DefaultTTL: 300, Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	// Negotiation and listing work, so the applier is ready; changes fail.
	srv := echoingServer(webhook.NewServer(mem, webhook.ServerOptions{Logger: logger()}),
		func(r *http.Request) bool { return r.Method == http.MethodGet }, "password "+password)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword(user, password)
	u.RawQuery = url.Values{"token": {token}}.Encode()

	log, logged := capturedLogger()
	cfg := applier.Config{Provider: webhook.Name, Interval: time.Hour, DefaultTTL: 300}
	cfg.Webhook = webhook.Config{URL: u.String(), ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond}
	a, err := applier.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	run(t, js, a)
	sendPlanTo(t, js, webhook.Name, &events.Plan{ID: "leak1", Provider: webhook.Name, Zone: zone, Changes: []events.Change{
		{New: ep("www.example.org", "A", "192.0.2.1")},
	}})
	res, _ := waitResultOf(t, js, webhook.Name, "leak1")

	// Where the error text is made: the result says what failed, masked.
	if res.Status != events.ResultFailed || len(res.Failed) != 1 || !strings.Contains(res.Error, "HTTP 500") {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(res.Error, "xxxxx@") || !strings.Contains(res.Error, provider.Mask) || res.Failed[0].Error != res.Error {
		t.Errorf("the result's error is not masked: %q; the change's: %q", res.Error, res.Failed[0].Error)
	}
	waitFor(t, "the failure logged", func() bool { return strings.Contains(logged.String(), "plan not fully applied") })
	secrets := []string{password, token, basicAuth(user, password)}
	assertNoSecret(t, "the bus", busText(t, js), secrets...)
	assertNoSecret(t, "the log", logged.String(), secrets...)
	if !strings.Contains(logged.String(), "webhook: retrying request") {
		t.Errorf("the webhook provider's own line is not in the log:\n%s", logged)
	}
}
