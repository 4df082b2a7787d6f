package externaldns

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	edprovider "sigs.k8s.io/external-dns/provider"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// slowReader is an ExternalDNS provider whose listing answers late,
// whatever its context says (a provider library that ignores it), and
// which counts the writes that reach it.
type slowReader struct {
	edprovider.BaseProvider
	delay  time.Duration
	listed chan struct{}
	writes atomic.Int32
}

func (s *slowReader) Records(context.Context) ([]*endpoint.Endpoint, error) {
	time.Sleep(s.delay)
	close(s.listed)
	return nil, nil
}

func (s *slowReader) ApplyChanges(context.Context, *plan.Changes) error {
	s.writes.Add(1)
	return nil
}

// A write whose call ended before the provider answered its read — at
// the call's deadline, or when the lease was lost — never reaches the
// provider: the apply returns when its context ends, the late listing is
// dropped, and the write after it is refused.
func TestWriteAfterItsCallEndedNeverReachesTheProvider(t *testing.T) {
	const slow, margin = 3 * time.Second, 2 * time.Second
	for name, end := range map[string]func() (context.Context, context.CancelFunc){
		"deadline": func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		},
		"lease lost": func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			return ctx, cancel
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := &slowReader{delay: slow, listed: make(chan struct{})}
			h := newHandler(s, endpoint.NewDomainFilter([]string{"example.org"}), false, slog.Default())
			p, err := webhook.New(webhook.Config{URL: inProcessURL, Retries: -1}, provider.Options{}, webhook.WithTransport(inProcess{h}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := end()
			defer cancel()
			e := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
			start := time.Now()
			err = provider.Checked(p).Apply(ctx, "example.org", []events.Change{{New: &e}})
			if took := time.Since(start); err == nil || took > time.Second+margin {
				t.Fatalf("apply: %v after %s, want its context's error after 1s", err, took)
			}
			select {
			case <-s.listed:
			case <-time.After(slow + margin):
				t.Fatal("the slow listing never ended")
			}
			time.Sleep(time.Second) // what the abandoned apply would do next, it would have done by now
			if n := s.writes.Load(); n != 0 {
				t.Fatalf("%d write(s) reached the provider after the apply's context ended", n)
			}
		})
	}
}
