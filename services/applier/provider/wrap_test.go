package provider_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// counting is a real inmemory provider that counts the calls reaching it.
// counting is a provider that counts its calls. It has the three methods
// every provider has and no more (the in-memory one it wraps also reads
// names back, which these tests must not assume).
type counting struct {
	mem                     *inmemory.Provider
	zones, records, applies atomic.Int64
}

func (c *counting) Zones(ctx context.Context) ([]string, error) {
	c.zones.Add(1)
	return c.mem.Zones(ctx)
}

func (c *counting) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	c.records.Add(1)
	return c.mem.Records(ctx, zone)
}

func (c *counting) Apply(ctx context.Context, zone string, changes []events.Change) error {
	c.applies.Add(1)
	return c.mem.Apply(ctx, zone, changes)
}

func newCounting(t *testing.T) *counting {
	t.Helper()
	p, err := inmemory.New(inmemory.Config{Zones: []string{"example.org", "example.com"}}, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return &counting{mem: p}
}

func TestCacheZones(t *testing.T) {
	ctx := context.Background()
	t.Run("zero duration asks every time", func(t *testing.T) {
		c := newCounting(t)
		p := provider.CacheZones(c, 0)
		for range 3 {
			if _, err := p.Zones(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.zones.Load(); n != 3 {
			t.Fatalf("provider asked %d times, want 3", n)
		}
	})
	t.Run("cached for the duration", func(t *testing.T) {
		c := newCounting(t)
		p := provider.CacheZones(c, time.Hour)
		for range 5 {
			zones, err := p.Zones(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(zones) != 2 || zones[0] != "example.com" || zones[1] != "example.org" {
				t.Fatalf("zones %v", zones)
			}
			zones[0] = "mangled.by.caller" // a caller's edit must not reach the cache
		}
		if n := c.zones.Load(); n != 1 {
			t.Fatalf("provider asked %d times, want 1", n)
		}
		// Only Zones is cached.
		for range 2 {
			if _, err := p.Records(ctx, "example.org"); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.records.Load(); n != 2 {
			t.Fatalf("records asked %d times, want 2", n)
		}
	})
	t.Run("asks again once expired", func(t *testing.T) {
		c := newCounting(t)
		p := provider.CacheZones(c, 20*time.Millisecond)
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for c.zones.Load() < 2 && time.Now().Before(deadline) {
			if _, err := p.Zones(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n := c.zones.Load(); n != 2 {
			t.Fatalf("provider asked %d times after expiry, want 2", n)
		}
	})
	t.Run("errors are not cached", func(t *testing.T) {
		c := newCounting(t)
		f := &failingZones{counting: c, fail: 1}
		p := provider.CacheZones(f, time.Hour)
		if _, err := p.Zones(ctx); err == nil {
			t.Fatal("want the provider's error")
		}
		for range 3 {
			if zones, err := p.Zones(ctx); err != nil || len(zones) != 2 {
				t.Fatalf("zones %v, %v", zones, err)
			}
		}
		if n := c.zones.Load(); n != 2 {
			t.Fatalf("provider asked %d times, want 2 (the failure and one success)", n)
		}
	})
}

// failingZones fails the first fail calls of Zones.
type failingZones struct {
	*counting
	fail int
}

func (f *failingZones) Zones(ctx context.Context) ([]string, error) {
	zones, err := f.counting.Zones(ctx)
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("SERVFAIL")
	}
	return zones, err
}

func TestRateLimit(t *testing.T) {
	ctx := context.Background()
	t.Run("nil limiter is no limit", func(t *testing.T) {
		c := newCounting(t)
		if p := provider.RateLimit(c, nil, nil); p != provider.Provider(c) {
			t.Fatalf("got a wrapper %T for no limit", p)
		}
	})
	t.Run("burst passes, then calls wait for a token", func(t *testing.T) {
		c := newCounting(t)
		var waits atomic.Int64
		// One token a day: after the burst of 3, nothing passes in a test's time.
		p := provider.RateLimit(c, rate.NewLimiter(rate.Every(24*time.Hour), 3), func(time.Duration) { waits.Add(1) })
		if _, err := p.Zones(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Records(ctx, "example.org"); err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(ctx, "example.org", []events.Change{{New: &events.Endpoint{
			DNSName: "a.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}}}}); err != nil {
			t.Fatal(err)
		}
		if w := waits.Load(); w != 3 {
			t.Fatalf("waited %d times, want 3", w)
		}
		// The fourth call has no token: it waits until its context is
		// cancelled, then returns the context's error without calling
		// the provider.
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		done := make(chan error, 1)
		go func() { done <- p.Apply(cctx, "example.org", nil) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a cancelled wait did not return")
		}
		if _, err := p.Zones(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Zones on a cancelled context: %v", err)
		}
		if _, err := p.Records(cctx, "example.org"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Records on a cancelled context: %v", err)
		}
		if z, r, a := c.zones.Load(), c.records.Load(), c.applies.Load(); z != 1 || r != 1 || a != 1 {
			t.Fatalf("provider got zones=%d records=%d applies=%d calls, want 1 each", z, r, a)
		}
		if w := waits.Load(); w != 6 {
			t.Fatalf("wait time reported %d times, want 6 (once per call)", w)
		}
	})
}

// reading is counting that can read names, as rfc2136 and pdns can.
type reading struct{ *counting }

func (r reading) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, err := r.Records(ctx, zone)
	return provider.AtNames(eps, names), err
}

func TestCheckedStartsEveryApplyOnce(t *testing.T) {
	ctx := context.Background()
	c := newCounting(t)
	p := provider.Checked(c)
	if provider.Checked(p) != p {
		t.Fatal("Checked of a checked provider wraps it again")
	}
	a := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
	for name, changes := range map[string][]events.Change{
		"neither old nor new": {{}},
		"out of zone":         {{New: &events.Endpoint{DNSName: "www.example.net", RecordType: "A", Targets: []string{"192.0.2.1"}}}},
		"no targets":          {{New: &events.Endpoint{DNSName: "x.example.org", RecordType: "A"}}},
		"two RRsets":          {{Old: &a, New: &events.Endpoint{DNSName: "www.example.org", RecordType: "AAAA", Targets: []string{"2001:db8::1"}}}},
	} {
		if err := p.Apply(ctx, "example.org", changes); !errors.Is(err, provider.ErrPermanent) {
			t.Errorf("%s: want a permanent error, got %v", name, err)
		}
	}
	if err := p.Apply(ctx, "example.org", nil); err != nil {
		t.Fatal(err)
	}
	if n := c.applies.Load(); n != 0 {
		t.Fatalf("%d refused or empty batch(es) reached the provider", n)
	}
	// The zone reaches the provider normalized.
	if err := p.Apply(ctx, "Example.ORG.", []events.Change{{New: &a}}); err != nil {
		t.Fatal(err)
	}
	if eps, err := p.Records(ctx, "EXAMPLE.org."); err != nil || len(eps) != 1 {
		t.Fatalf("records %v %v", eps, err)
	}
	// Only a provider that reads names claims to.
	if _, ok := p.(provider.NameReader); ok {
		t.Fatal("a checked provider that cannot read names claims to")
	}
	r := provider.Checked(reading{c})
	if _, ok := r.(provider.NameReader); !ok {
		t.Fatal("a checked NameReader lost RecordsAt")
	}
	if eps, err := provider.RecordsAt(ctx, r, "Example.org.", []string{"www.example.org"}); err != nil || len(eps) != 1 {
		t.Fatalf("records at %v %v", eps, err)
	}
}
