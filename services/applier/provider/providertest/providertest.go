// Package providertest holds what provider tests share: reading a real DNS
// server's answers in the form providers give targets, finding an RRset in
// a listing, and the checks every provider against a real server passes.
package providertest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
)

// Querier is a DNS server a test can ask: testenv/bind and testenv/pdns.
type Querier interface {
	Query(name string, qtype uint16) ([]dns.RR, error)
}

// Answers asks s for name/qtype over DNS and returns the targets of the
// records of that type, sorted, written as providers write them.
func Answers(t testing.TB, s Querier, name string, qtype uint16) []string {
	t.Helper()
	rrs, err := s.Query(name, qtype)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == qtype {
			out = append(out, rfc2136.Target(rr))
		}
	}
	slices.Sort(out)
	return out
}

// Find returns the RRset of name and type in eps, or nil.
func Find(eps []events.Endpoint, name, typ string) *events.Endpoint {
	for i := range eps {
		if eps[i].DNSName == name && eps[i].RecordType == typ {
			return &eps[i]
		}
	}
	return nil
}

// ReadBackAgrees checks that read (a RecordsAt) gives for names exactly
// what a full listing of zone holds at them, and returns it.
func ReadBackAgrees(t testing.TB, p provider.Provider, zone string, names []string,
	read func(ctx context.Context, zone string, names []string) ([]events.Endpoint, error)) []events.Endpoint {
	t.Helper()
	ctx := context.Background()
	got, err := read(ctx, zone, names)
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.Records(ctx, zone)
	if err != nil {
		t.Fatal(err)
	}
	if want := provider.AtNames(all, names); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back at %v:\n%v\nthe zone holds there:\n%v", names, got, want)
	}
	return got
}

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}

// StaleAfterOutOfBandChange writes web.example.org A 192.0.2.1 through p
// (serving example.org on s) and lists it, then calls plant, which must
// set web.example.org A to 192.0.2.77 and plant txt.example.org TXT
// "planted" behind p's back. Plans computed before (an update, a delete,
// a create over the planted TXT, a batch long enough for a whole-zone
// read) must fail with ErrStale and change nothing; the same batch with
// what the server holds now as Old must go through.
func StaleAfterOutOfBandChange(t testing.TB, p provider.Provider, s Querier, plant func()) {
	t.Helper()
	ctx := context.Background()
	if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("web.example.org", "A", 60, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	seen, err := p.Records(ctx, "example.org")
	if err != nil {
		t.Fatal(err)
	}
	old := Find(seen, "web.example.org", "A")
	if old == nil {
		t.Fatalf("not listed: %+v", seen)
	}
	plant()
	many := func(last events.Change) []events.Change {
		var cs []events.Change
		for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
			cs = append(cs, events.Change{New: ep(n+".example.org", "A", 0, "192.0.2.10")})
		}
		return append(cs, last)
	}
	for name, changes := range map[string][]events.Change{
		"update":                      {{New: ep("new.example.org", "A", 0, "192.0.2.9")}, {Old: old, New: ep("web.example.org", "A", 0, "192.0.2.2")}},
		"delete":                      {{New: ep("new.example.org", "A", 0, "192.0.2.9")}, {Old: old}},
		"create over planted":         {{New: ep("new.example.org", "A", 0, "192.0.2.9")}, {New: ep("txt.example.org", "TXT", 0, "mine")}},
		"many names, whole-zone read": many(events.Change{Old: old}),
	} {
		if err := p.Apply(ctx, "example.org", changes); !errors.Is(err, provider.ErrStale) {
			t.Fatalf("%s: want ErrStale, got %v", name, err)
		}
		if got := Answers(t, s, "web.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.77"}) {
			t.Fatalf("%s: stale plan changed web: %v", name, got)
		}
		if got := Answers(t, s, "txt.example.org", dns.TypeTXT); !slices.Equal(got, []string{"planted"}) {
			t.Fatalf("%s: stale plan changed txt: %v", name, got)
		}
		for _, n := range []string{"new", "a", "j"} {
			if got := Answers(t, s, n+".example.org", dns.TypeA); len(got) != 0 {
				t.Fatalf("%s: stale batch partly applied: %s %v", name, n, got)
			}
		}
	}
	// With what the server holds now as Old, the same plan goes through,
	// the many-names path included.
	if err := p.Apply(ctx, "example.org", many(events.Change{Old: ep("web.example.org", "A", 0, "192.0.2.77"), New: ep("web.example.org", "A", 0, "192.0.2.2")})); err != nil {
		t.Fatal(err)
	}
	if got := Answers(t, s, "web.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("web: %v", got)
	}
	if got := Answers(t, s, "j.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.10"}) {
		t.Fatalf("j: %v", got)
	}
}

// ApplyFailsTransiently checks that p (with Retries 2), whose server is
// down, fails an Apply to example.org with a transient error after 3
// attempts within limit, and at once with context.Canceled when the
// context is cancelled.
func ApplyFailsTransiently(t testing.TB, p provider.Provider, limit time.Duration) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	err := p.Apply(ctx, "example.org", []events.Change{{New: ep("x.example.org", "A", 0, "192.0.2.1")}})
	if err == nil || errors.Is(err, provider.ErrStale) || errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("want a transient error after 3 attempts, got %v", err)
	}
	if time.Since(start) > limit {
		t.Fatalf("retries not bounded: %s", time.Since(start))
	}
	// A cancelled context ends the retries at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Apply(cctx, "example.org", []events.Change{{New: ep("x.example.org", "A", 0, "192.0.2.1")}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// RefusesStalePlans checks that p (serving example.org on s, where
// www.example.org A holds wwwNow, no longer old) refuses plans computed
// from an earlier state with ErrStale and applies nothing of them: a batch
// whose second change expects old, a create over the existing RRset, a
// delete of an RRset that is not there.
func RefusesStalePlans(t testing.TB, p provider.Provider, s Querier, old *events.Endpoint, wwwNow []string) {
	t.Helper()
	ctx := context.Background()
	stale := []events.Change{
		{New: ep("other.example.org", "A", 0, "192.0.2.9")},
		{Old: old, New: ep("www.example.org", "A", 0, "192.0.2.4")},
	}
	if err := p.Apply(ctx, "example.org", stale); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("stale apply: %v", err)
	}
	if got := Answers(t, s, "www.example.org", dns.TypeA); !slices.Equal(got, wwwNow) {
		t.Fatalf("after stale: %v, want %v", got, wwwNow)
	}
	if got := Answers(t, s, "other.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("stale batch partly applied: %v", got)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("www.example.org", "A", 0, "192.0.2.5")}}); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("create over existing: %v", err)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{{Old: ep("gone.example.org", "A", 0, "192.0.2.5")}}); !errors.Is(err, provider.ErrStale) {
		t.Fatalf("delete of a missing RRset: %v", err)
	}
}
