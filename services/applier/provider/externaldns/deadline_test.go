package externaldns_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/moto"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// callDeadline is the deadline of the calls below; margin what a loaded
// 2-core machine may add to it.
const (
	callDeadline = time.Second
	margin       = 2 * time.Second
)

// silentRoute53 is ExternalDNS' aws provider, through the adapter, with
// the AWS SDK sent to a listener that accepts connections and never
// answers (the SDK, as ExternalDNS builds it, has no response timeout).
func silentRoute53(t *testing.T) (provider.Provider, *providertest.Silent) {
	t.Helper()
	s := providertest.SilentT(t)
	moto.EndpointT(t, s.URL())
	return newAdapter(t, []string{"--provider=aws", "--aws-zone-type=public", "--domain-filter=example.org"}), s
}

// returnsBy runs call and fails the test unless it returns by limit.
func returnsBy(t *testing.T, what string, limit time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s still running after %s", what, limit)
		return nil
	}
}

// Every call to a Route53 that never answers ends with its context, and
// so does every HTTP request the AWS SDK sent for it: the hosted zone
// lookup ExternalDNS runs under context.Background() included.
func TestRoute53ThatNeverAnswersIsCutOffAtTheDeadline(t *testing.T) {
	p, s := silentRoute53(t)
	e := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
	for op, call := range map[string]func(context.Context) error{
		"zones":   func(ctx context.Context) error { _, err := p.Zones(ctx); return err },
		"records": func(ctx context.Context) error { _, err := p.Records(ctx, "example.org"); return err },
		"apply": func(ctx context.Context) error {
			return p.Apply(ctx, "example.org", []events.Change{{New: &e}})
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
		err := returnsBy(t, op, callDeadline+margin, func() error { return call(ctx) })
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the deadline's error", op, err)
		}
	}
	if s.Accepted() == 0 {
		t.Fatal("the AWS SDK never reached the silent listener")
	}
	// The SDK's requests were cut off, not left behind waiting.
	deadline := time.Now().Add(margin)
	for s.Open() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the SDK's %d connections still open %s after their calls ended", s.Open(), s.Accepted(), margin)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An applier driving a Route53 that never answers stops at once when told
// to (shutdown, or a lost lease), even with no --provider-timeout to save
// it: its listing ends with its context.
func TestApplierStopsWhileRoute53NeverAnswers(t *testing.T) {
	p, s := silentRoute53(t)
	srv := natsenv.StartT(t)
	_, js := natsenv.Connect(t, srv.ClientURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := events.EnsureStreams(ctx, js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	a, err := applier.NewWithProvider(applier.Config{Interval: time.Hour, DefaultTTL: 300, ProviderTimeout: time.Hour},
		"aws", p, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, js) }()
	for s.Accepted() == 0 { // the first listing is waiting on Route53
		select {
		case err := <-done:
			t.Fatalf("Run ended before listing: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := returnsBy(t, "Run", margin, func() error { return <-done }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
}
