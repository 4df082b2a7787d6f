package applier_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

func pdnsConfig(s *pdnsenv.Server, interval time.Duration) applier.Config {
	return applier.Config{
		Provider: pdns.Name, Interval: interval, DefaultTTL: 300,
		PDNS: pdns.Config{
			Server: s.APIURL, APIKey: s.APIKey, ServerID: pdnsenv.ServerID,
			RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
		},
	}
}

// Helpers that take the provider's name (applier_test.go's observed,
// sendPlan and waitResult are these for rfc2136).

func observedAt(t *testing.T, js jetstream.JetStream, prov, name string) (*events.ObservedState, *jetstream.RawStreamMsg) {
	t.Helper()
	m := lastMsg(t, js, events.StreamObserved, events.ObservedSubject(prov, name))
	if m == nil {
		return nil, nil
	}
	var st events.ObservedState
	if err := events.Unmarshal(m.Header, m.Data, &st); err != nil {
		t.Fatal(err)
	}
	return &st, m
}

// sendPlanTo publishes a plan to prov's applier and returns its event id.
func sendPlanTo(t *testing.T, js jetstream.JetStream, prov string, p *events.Plan) string {
	t.Helper()
	msg, err := events.Message(events.PlanSubject(prov, zone), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	return msg.Header.Get(events.HeaderEventID)
}

// waitResultOf waits for the result of plan planID and for the observed
// states it carries to be stored.
func waitResultOf(t *testing.T, js jetstream.JetStream, prov, planID string) (events.Result, *jetstream.RawStreamMsg) {
	t.Helper()
	var res events.Result
	var raw *jetstream.RawStreamMsg
	waitFor(t, "result of plan "+planID, func() bool {
		var ok bool
		res, raw, ok = lastResultMsg(t, js, prov)
		return ok && res.PlanID == planID
	})
	awaitCarried(t, js, res)
	return res, raw
}

// lastResultMsg is the zone's last result, if any.
func lastResultMsg(t *testing.T, js jetstream.JetStream, prov string) (events.Result, *jetstream.RawStreamMsg, bool) {
	t.Helper()
	var res events.Result
	raw := lastMsg(t, js, events.StreamResults, events.ResultSubject(prov, zone))
	if raw == nil {
		return res, nil, false
	}
	if err := events.Unmarshal(raw.Header, raw.Data, &res); err != nil {
		t.Fatal(err)
	}
	return res, raw, true
}

// awaitCarried waits until the observed stream holds, after the result's
// read-back, each observed state the result carries, as carried.
func awaitCarried(t *testing.T, js jetstream.JetStream, res events.Result) {
	t.Helper()
	for _, o := range res.Observed {
		want, err := events.HashOf(&o)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "observed state of "+o.DNSName+" carried by "+res.PlanID, func() bool {
			m := lastMsg(t, js, events.StreamObserved, events.ObservedSubject(o.Provider, o.DNSName))
			return m != nil && m.Sequence > res.ObservedSeq && m.Header.Get(events.HeaderHash) == want
		})
	}
}

func TestEndToEndPDNS(t *testing.T) {
	s := pdnsenv.StartT(t, zone)
	endToEnd(t, pdns.Name, providertest.PowerDNS{Server: s}, true, func(interval time.Duration) applier.Config { return pdnsConfig(s, interval) })
}

func TestConfigPDNS(t *testing.T) {
	var cfg applier.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if cfg.PDNS.Server != "http://localhost:8081" || cfg.PDNS.ServerID != "localhost" {
		t.Fatalf("pdns flag defaults: %+v", cfg.PDNS)
	}
	err := fs.Parse([]string{"--provider=pdns", "--pdns-server=https://pdns.example.org:8443", "--pdns-api-key=secret",
		"--pdns-server-id=main", "--pdns-skip-tls-verify"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PDNS.Server != "https://pdns.example.org:8443" || cfg.PDNS.APIKey != "secret" || cfg.PDNS.ServerID != "main" || !cfg.PDNS.SkipTLSVerify {
		t.Fatalf("flags not parsed: %+v", cfg.PDNS)
	}
	a, err := applier.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Provider().(*pdns.Provider); !ok {
		t.Fatalf("provider %T", a.Provider())
	}
	t.Setenv(pdns.APIKeyEnv, "")
	c := cfg
	c.PDNS.APIKey = ""
	if _, err := applier.New(c, nil); err == nil {
		t.Error("pdns without an API key accepted")
	}
	c = cfg
	c.PDNS.Server = "localhost:8081"
	if _, err := applier.New(c, nil); err == nil {
		t.Error("pdns server without a scheme accepted")
	}
}
