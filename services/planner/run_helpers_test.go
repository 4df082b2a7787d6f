package planner

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// Helpers for tests that run the planner as it runs in production: Run
// against a real JetStream, fed through the streams.

func testLogger() *slog.Logger {
	if os.Getenv("ZS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startBus starts JetStream with zonestream's streams.
func startBus(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	srv := natsenv.StartT(t)
	nc, js := natsenv.Connect(t, srv.ClientURL())
	if err := events.EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// runPlanner runs a planner until the test ends, and waits until it has
// replayed the streams.
func runPlanner(t *testing.T, js jetstream.JetStream, cfg Config) *Planner {
	t.Helper()
	p, _ := runPlannerUntil(t, js, cfg)
	return p
}

// runPlannerUntil is runPlanner, with a stop that ends it before the test
// does (and returns once Run has).
func runPlannerUntil(t *testing.T, js jetstream.JetStream, cfg Config) (*Planner, func()) {
	t.Helper()
	p := newTestPlanner(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx, js) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	waitUntil(t, "planner replayed the streams", func() bool { return p.Ready() == nil })
	return p, stop
}

// newTestPlanner is a planner of cfg, with the tests' defaults for what
// cfg leaves unset: owner "me", sync, the txt registry.
func newTestPlanner(t *testing.T, cfg Config) *Planner {
	t.Helper()
	if cfg.Ownership.OwnerID == "" {
		cfg.Ownership.OwnerID = "me"
	}
	cfg.Policy = string(cmpOr(Policy(cfg.Policy), PolicySync))
	cfg.Registry = cmpOr(cfg.Registry, "txt")
	cfg.BatchChangeSize = cmpOr(cfg.BatchChangeSize, 1000)
	cfg.BatchWindow = cmpOr(cfg.BatchWindow, 20*time.Millisecond)
	cfg.PlanTimeout = cmpOr(cfg.PlanTimeout, 30*time.Second)
	p, err := New(cfg, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// freshRun is a caught-up planner state on a real JetStream, planning
// zone for provider "p": for tests that drive fold and plan themselves,
// without Run.
func freshRun(t *testing.T, js jetstream.JetStream, cfg Config) *run {
	t.Helper()
	cfg.Ownership.OwnerID, cfg.Policy, cfg.Registry = "me", "sync", "txt"
	cfg.BatchChangeSize = cmpOr(cfg.BatchChangeSize, 1000)
	cfg.PlanTimeout = cmpOr(cfg.PlanTimeout, time.Minute)
	p, err := New(cfg, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	p.caughtUp.Store(true)
	s := newRun(p)
	s.js = js
	s.zones["p"] = []string{zone}
	return s
}

// feed folds ev into s as a live message: published while the planner
// watches. Until the desired state is complete, only such names are
// planned (README, Safety).
func feed(tb testing.TB, s *run, subject string, ev events.Event) { feedAt(tb, s, subject, ev, 1) }

// feedAt is feed with the message's stream sequence.
func feedAt(tb testing.TB, s *run, subject string, ev events.Event, seq uint64) {
	tb.Helper()
	msg, err := events.Message(subject, ev, "")
	if err != nil {
		tb.Fatal(err)
	}
	s.fold(context.Background(), events.Received{Subject: subject, Header: msg.Header, Data: msg.Data, Seq: seq, Live: true})
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func publish(t *testing.T, js jetstream.JetStream, subject string, ev events.Event) {
	t.Helper()
	if _, _, err := events.Publish(context.Background(), js, subject, ev, ""); err != nil {
		t.Fatal(err)
	}
}

// publishRaw publishes bytes that are no event at all.
func publishRaw(t *testing.T, js jetstream.JetStream, subject string, data []byte) {
	t.Helper()
	if _, err := js.Publish(context.Background(), subject, data); err != nil {
		t.Fatal(err)
	}
}

// publishOn publishes ev on a subject that is not its own (a forged or
// misrouted message).
func publishOn(t *testing.T, js jetstream.JetStream, subject string, ev events.Event) {
	t.Helper()
	msg, err := events.Message(subject, ev, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// publishComplete publishes dedup's live completeness mark: deletes allowed.
func publishComplete(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	publish(t, js, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c"},
		LeaseMillis: time.Hour.Milliseconds()})
}

// held publishes what provider p holds at a name of zone, with our
// ownership record for each record's type.
func held(t *testing.T, js jetstream.JetStream, records ...events.Endpoint) {
	t.Helper()
	byName := map[string][]events.Endpoint{}
	for _, r := range records {
		byName[r.DNSName] = append(byName[r.DNSName], r)
	}
	for name, rs := range byName {
		publish(t, js, events.ObservedSubject("p", name), &events.ObservedState{Provider: "p", Zone: zone, DNSName: name, Records: rs})
	}
}

func zones(t *testing.T, js jetstream.JetStream, zs ...string) {
	t.Helper()
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: zs})
}

func wanted(t *testing.T, js jetstream.JetStream, eps ...events.Endpoint) {
	t.Helper()
	name := eps[0].DNSName
	publish(t, js, events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: eps,
		Contributors: []events.ObjectRef{{Cluster: "c", Source: "service", Namespace: "default", Name: "web"}}})
}

// planSub subscribes to every plan published from now on.
func planSub(t *testing.T, nc *nats.Conn) *nats.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(events.SubjectPlans + ".>")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return sub
}

// nextPlan waits for the next plan published.
func nextPlan(t *testing.T, sub *nats.Subscription) events.Plan {
	t.Helper()
	msg, err := sub.NextMsg(20 * time.Second)
	if err != nil {
		t.Fatalf("no plan: %v", err)
	}
	var plan events.Plan
	if err := events.Unmarshal(msg.Header, msg.Data, &plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// planLines is describe(), one line per change, sorted.
func planLines(p events.Plan) []string {
	var lines []string
	for _, c := range p.Changes {
		lines = append(lines, describe([]events.Change{c}))
	}
	slices.Sort(lines)
	return lines
}
