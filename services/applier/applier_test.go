package applier_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

const zone = "example.org"

func logger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("ZS_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func bus(t testing.TB) jetstream.JetStream {
	t.Helper()
	_, js := busConn(t)
	return js
}

// busConn starts a JetStream server with zonestream's streams in memory.
func busConn(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	s := natsenv.StartT(t)
	nc, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func rfcConfig(s *bind.Server, interval time.Duration) applier.Config {
	return applier.Config{
		Provider: rfc2136.Name, Interval: interval, DefaultTTL: 300,
		RFC2136: rfc2136.Config{
			Host: s.Host, Port: s.Port, Zones: []string{zone},
			TSIGKeyName: s.KeyName, TSIGSecret: s.Secret, TSIGSecretAlg: s.Algorithm, TSIGAXFR: true,
			BatchChangeSize: 50, RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
		},
	}
}

type running struct {
	once   sync.Once
	a      *applier.Applier
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, js jetstream.JetStream, cfg applier.Config) *running {
	t.Helper()
	a, err := applier.New(cfg, logger())
	if err != nil {
		t.Fatal(err)
	}
	return run(t, js, a)
}

// run runs a until the test ends and waits until it is ready.
func run(t testing.TB, js jetstream.JetStream, a *applier.Applier) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{a: a, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(ctx, js) }()
	t.Cleanup(r.stop)
	waitFor(t, "applier ready", func() bool { return a.Ready() == nil })
	return r
}

func (r *running) stop() {
	r.once.Do(func() {
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			panic("applier did not stop")
		}
	})
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lastMsg(t *testing.T, js jetstream.JetStream, stream, subject string) *jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func lastSeq(t *testing.T, js jetstream.JetStream, stream string) (seq, msgs uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq, info.State.Msgs
}

// observed, sendPlan and waitResult are observedAt, sendPlanTo and
// waitResultOf for the rfc2136 applier most tests here run.

func observed(t *testing.T, js jetstream.JetStream, name string) (*events.ObservedState, *jetstream.RawStreamMsg) {
	t.Helper()
	return observedAt(t, js, "rfc2136", name)
}

// sendPlan publishes a plan and returns its event id.
func sendPlan(t *testing.T, js jetstream.JetStream, p *events.Plan) string {
	t.Helper()
	return sendPlanTo(t, js, "rfc2136", p)
}

func waitResult(t *testing.T, js jetstream.JetStream, planID string) (events.Result, *jetstream.RawStreamMsg) {
	t.Helper()
	return waitResultOf(t, js, "rfc2136", planID)
}

func ep(name, typ string, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, 0, targets...)
	return &e
}

func TestEndToEnd(t *testing.T) {
	b := bind.StartT(t, zone)
	endToEnd(t, rfc2136.Name, providertest.BIND{Server: b}, true, func(interval time.Duration) applier.Config { return rfcConfig(b, interval) })
}

func TestInMemoryProvider(t *testing.T) {
	js := bus(t)
	cfg := applier.Config{Provider: inmemory.Name, Interval: time.Hour, DefaultTTL: 300}
	cfg.InMemory.Zones = []string{zone}
	a, err := applier.New(cfg, logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, js) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "ready", func() bool { return a.Ready() == nil })
	msg, _ := events.Message(events.PlanSubject("inmemory", zone), &events.Plan{ID: "m1", Provider: "inmemory", Zone: zone, Changes: []events.Change{
		{New: ep("api.example.org", "CNAME", "lb.example.net.")},
	}}, "")
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "observed api", func() bool {
		st, err := js.Stream(ctx, events.StreamObserved)
		if err != nil {
			return false
		}
		m, err := st.GetLastMsgForSubject(ctx, events.ObservedSubject("inmemory", "api.example.org"))
		if err != nil {
			return false
		}
		var o events.ObservedState
		return events.Unmarshal(m.Header, m.Data, &o) == nil && len(o.Records) == 1 &&
			o.Records[0].Targets[0] == "lb.example.net" && o.Records[0].RecordTTL == 300
	})
}

func TestConfig(t *testing.T) {
	var cfg applier.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	err := fs.Parse([]string{"--provider=rfc2136", "--rfc2136-host=127.0.0.1", "--rfc2136-port=5353",
		"--rfc2136-zone=example.org", "--rfc2136-zone=example.net", "--rfc2136-tsig-keyname=k",
		"--rfc2136-tsig-secret=c2VjcmV0", "--rfc2136-tsig-secret-alg=hmac-sha512", "--rfc2136-tsig-axfr",
		"--rfc2136-min-ttl=30s", "--rfc2136-batch-change-size=10", "--interval=30s", "--default-ttl=600",
		"--zones-cache-duration=5m", "--provider-rate-limit=2.5", "--provider-rate-burst=4"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interval != 30*time.Second || cfg.DefaultTTL != 600 || len(cfg.RFC2136.Zones) != 2 || cfg.RFC2136.BatchChangeSize != 10 ||
		cfg.ZonesCacheDuration != 5*time.Minute || cfg.RateLimit != 2.5 || cfg.RateBurst != 4 {
		t.Fatalf("flags not parsed: %+v", cfg)
	}
	if _, err := applier.New(cfg, nil); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*applier.Config){
		"no provider":      func(c *applier.Config) { c.Provider = "" },
		"unknown provider": func(c *applier.Config) { c.Provider = "route53" },
		"no interval":      func(c *applier.Config) { c.Interval = 0 },
		"no ttl":           func(c *applier.Config) { c.DefaultTTL = 0 },
		"no zones":         func(c *applier.Config) { c.RFC2136.Zones = nil },
		"inmemory no zone": func(c *applier.Config) { c.Provider = "inmemory" },
		"negative cache":   func(c *applier.Config) { c.ZonesCacheDuration = -time.Second },
		"negative rate":    func(c *applier.Config) { c.RateLimit = -1 },
		"rate no burst":    func(c *applier.Config) { c.RateBurst = 0 },
	} {
		c := cfg
		mod(&c)
		if _, err := applier.New(c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// --min-ttl is ExternalDNS' --default-ttl, as a duration or in seconds.
func TestMinTTLIsTheDefaultTTL(t *testing.T) {
	for v, want := range map[string]int64{"1m12s": 72, "72": 72, "5m": 300} {
		var c applier.Config
		fs := flag.NewFlagSet("applier", flag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"--min-ttl=" + v}); err != nil || c.DefaultTTL != want {
			t.Errorf("--min-ttl=%s: TTL %d, %v; want %d", v, c.DefaultTTL, err, want)
		}
	}
	var c applier.Config
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--min-ttl=0"}); err == nil {
		t.Error("--min-ttl=0 accepted")
	}
}
