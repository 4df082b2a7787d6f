package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// callDeadline is the deadline of the calls below; margin what a loaded
// 2-core machine may add to it.
const (
	callDeadline = time.Second
	margin       = 2 * time.Second
)

// timeouts counts the calls Deadline abandoned, by operation.
type timeouts struct {
	mu  sync.Mutex
	ops map[string]int
}

func (c *timeouts) note(op string, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[op]++
}

func (c *timeouts) of(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// Every call of the HTTP providers to a server that accepts the
// connection and never answers returns at its deadline, with ErrTimeout,
// counted; their own timeouts (5 to 10 s a request, retried) are far
// longer.
func TestHungProviderCallsReturnAtTheirDeadline(t *testing.T) {
	s := providertest.SilentT(t)
	wh, err := webhook.New(webhook.Config{URL: s.URL(), Zones: []string{"example.org"}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := pdns.New(pdns.Config{Server: s.URL(), APIKey: "secret"}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
	for name, raw := range map[string]provider.Provider{"webhook": wh, "pdns": pd} {
		t.Run(name, func(t *testing.T) {
			var n timeouts
			p := provider.Checked(provider.Deadline(raw, callDeadline, n.note))
			calls := map[string]func(context.Context) error{
				"zones": func(ctx context.Context) error { _, err := p.Zones(ctx); return err },
				"records": func(ctx context.Context) error {
					_, err := p.Records(ctx, "example.org")
					return err
				},
				"apply": func(ctx context.Context) error {
					return p.Apply(ctx, "example.org", []events.Change{{New: &e}})
				},
			}
			if _, ok := raw.(provider.NameReader); ok {
				calls["records_at"] = func(ctx context.Context) error {
					_, err := provider.RecordsAt(ctx, p, "example.org", []string{"www.example.org"})
					return err
				}
			}
			for op, call := range calls {
				start := time.Now()
				err := call(context.Background())
				took := time.Since(start)
				if !errors.Is(err, provider.ErrTimeout) || errors.Is(err, provider.ErrPermanent) {
					t.Errorf("%s: %v, want a transient ErrTimeout", op, err)
				}
				if took > callDeadline+margin {
					t.Errorf("%s returned after %s, deadline %s", op, took, callDeadline)
				}
				if n.of(op) != 1 {
					t.Errorf("%s: %d timeouts counted, want 1", op, n.of(op))
				}
			}
		})
	}
	if s.Accepted() == 0 {
		t.Fatal("no call reached the silent server")
	}
}

// A plan's apply abandoned at its deadline writes nothing afterwards:
// the webhook's read before the write answers only after the deadline,
// and the write (POST /records) never comes.
func TestWriteAbandonedAtItsDeadlineNeverReachesTheProvider(t *testing.T) {
	const slow = 3 * time.Second // the read's answer: past the deadline, within the webhook's read timeout
	var writes atomic.Int32
	answered := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", webhook.MediaType)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/":
			_ = json.NewEncoder(w).Encode(webhook.DomainFilter{Include: []string{"example.org"}})
		case r.Method == http.MethodGet && r.URL.Path == webhook.PathRecords:
			time.Sleep(slow) // a server busy elsewhere: it does not look at the request's context
			_, _ = w.Write([]byte("[]"))
			close(answered)
		default:
			writes.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	raw, err := webhook.New(webhook.Config{URL: srv.URL, Retries: -1}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n timeouts
	p := provider.Checked(provider.Deadline(raw, callDeadline, n.note))
	ctx := context.Background()
	if _, err := p.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	e := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
	start := time.Now()
	err = p.Apply(ctx, "example.org", []events.Change{{New: &e}})
	if took := time.Since(start); !errors.Is(err, provider.ErrTimeout) || took > callDeadline+margin {
		t.Fatalf("apply: %v after %s, want ErrTimeout at %s", err, took, callDeadline)
	}
	select {
	case <-answered:
	case <-time.After(slow + margin):
		t.Fatal("the slow read never answered")
	}
	time.Sleep(time.Second) // what the abandoned apply would do next, it would have done by now
	if w := writes.Load(); w != 0 {
		t.Fatalf("%d write(s) reached the webhook after the apply was abandoned", w)
	}
	if n.of("apply") != 1 {
		t.Fatalf("%d apply timeouts counted, want 1", n.of("apply"))
	}
}

// Bounded returns at once when its context ends first (a shutdown, a lost
// lease), with that context's error and not ErrTimeout: that is not the
// provider's fault.
func TestBoundedEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_, err := provider.Bounded(ctx, time.Hour, func(context.Context) (int, error) {
		<-release // a call that ignores its context
		return 1, nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, provider.ErrTimeout) || time.Since(start) > margin {
		t.Fatalf("%v after %s, want context.Canceled at once", err, time.Since(start))
	}
}

// A call that returns at once is never taken for one abandoned: its
// context is cancelled behind it as it returns, and Bounded must read its
// result, not the cancellation (an in-memory provider answers that fast).
func TestBoundedFastCallsKeepTheirResult(t *testing.T) {
	for i := range 20000 {
		v, err := provider.Bounded(context.Background(), time.Minute, func(context.Context) (int, error) { return i, nil })
		if err != nil || v != i {
			t.Fatalf("call %d: %d, %v; want %d and no error", i, v, err, i)
		}
	}
}
