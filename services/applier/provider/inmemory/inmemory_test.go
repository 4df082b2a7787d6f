package inmemory_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
)

func ep(name, typ string, ttl int64, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, ttl, targets...)
	return &e
}

func TestPreconditions(t *testing.T) {
	seed := []events.Change{
		{New: ep("www.example.org", "A", 60, "192.0.2.1", "192.0.2.2")},
		{New: ep("www.example.org", "TXT", 0, "heritage=external-dns")},
	}
	tests := []struct {
		name    string
		changes []events.Change
		err     error // nil, provider.ErrStale or provider.ErrPermanent
		want    map[string][]string
	}{
		{name: "create new RRset", changes: []events.Change{{New: ep("api.example.org", "A", 0, "192.0.2.9")}},
			want: map[string][]string{"api.example.org/A": {"192.0.2.9"}}},
		{name: "create over existing is stale", changes: []events.Change{{New: ep("www.example.org", "A", 0, "192.0.2.9")}},
			err: provider.ErrStale},
		{name: "update with exact old", changes: []events.Change{{Old: ep("www.example.org", "A", 0, "192.0.2.2", "192.0.2.1"), New: ep("www.example.org", "A", 0, "192.0.2.3")}},
			want: map[string][]string{"www.example.org/A": {"192.0.2.3"}}},
		{name: "update ignores TTL of old", changes: []events.Change{{Old: ep("www.example.org", "A", 9999, "192.0.2.1", "192.0.2.2"), New: ep("www.example.org", "A", 0, "192.0.2.3")}},
			want: map[string][]string{"www.example.org/A": {"192.0.2.3"}}},
		{name: "update with subset old is stale", changes: []events.Change{{Old: ep("www.example.org", "A", 0, "192.0.2.1"), New: ep("www.example.org", "A", 0, "192.0.2.3")}},
			err: provider.ErrStale},
		{name: "update of missing RRset is stale", changes: []events.Change{{Old: ep("nope.example.org", "A", 0, "192.0.2.1"), New: ep("nope.example.org", "A", 0, "192.0.2.3")}},
			err: provider.ErrStale},
		{name: "delete with exact old", changes: []events.Change{{Old: ep("WWW.example.org.", "txt", 0, "heritage=external-dns")}},
			want: map[string][]string{"www.example.org/TXT": nil}},
		{name: "one stale change voids the batch", changes: []events.Change{
			{New: ep("api.example.org", "A", 0, "192.0.2.9")},
			{Old: ep("www.example.org", "TXT", 0, "someone-else"), New: nil},
		}, err: provider.ErrStale, want: map[string][]string{"api.example.org/A": nil, "www.example.org/TXT": {"heritage=external-dns"}}},
		{name: "out of zone is permanent", changes: []events.Change{{New: ep("www.example.net", "A", 0, "192.0.2.9")}},
			err: provider.ErrPermanent},
		{name: "changes in order on one RRset", changes: []events.Change{
			{New: ep("api.example.org", "A", 0, "192.0.2.9")},
			{Old: ep("api.example.org", "A", 0, "192.0.2.9"), New: ep("api.example.org", "A", 0, "192.0.2.10")},
		}, want: map[string][]string{"api.example.org/A": {"192.0.2.10"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem, err := inmemory.New(inmemory.Config{Zones: []string{"example.org"}}, provider.Options{DefaultTTL: 300})
			if err != nil {
				t.Fatal(err)
			}
			p := provider.Checked(mem)
			if err := p.Apply(ctx, "example.org", seed); err != nil {
				t.Fatal(err)
			}
			err = p.Apply(ctx, "example.org", tc.changes)
			switch {
			case tc.err == nil && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			eps, err := p.Records(ctx, "example.org")
			if err != nil {
				t.Fatal(err)
			}
			have := map[string][]string{}
			for _, e := range eps {
				have[e.DNSName+"/"+e.RecordType] = e.Targets
				if e.RecordTTL == 0 {
					t.Errorf("%s %s stored without TTL", e.DNSName, e.RecordType)
				}
			}
			for k, want := range tc.want {
				if !slices.Equal(have[k], want) {
					t.Errorf("%s: have %v, want %v", k, have[k], want)
				}
			}
			if tc.err != nil && tc.want == nil {
				if !slices.Equal(have["www.example.org/A"], []string{"192.0.2.1", "192.0.2.2"}) {
					t.Errorf("failed batch changed state: %v", have)
				}
			}
		})
	}
}

func TestConfig(t *testing.T) {
	if _, err := inmemory.New(inmemory.Config{}, provider.Options{}); err == nil {
		t.Fatal("no zones accepted")
	}
	p, err := inmemory.New(inmemory.Config{Zones: []string{"B.example.", "a.example"}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zones, _ := p.Zones(context.Background())
	if !slices.Equal(zones, []string{"a.example", "b.example"}) {
		t.Fatalf("zones %v", zones)
	}
}

// TestReadBackAgreesWithTheListing: what RecordsAt reads back at a few
// names is exactly what a full listing holds there, set identifiers and
// every type included; a name it holds nothing at adds nothing.
func TestReadBackAgreesWithTheListing(t *testing.T) {
	p, err := inmemory.New(inmemory.Config{Zones: []string{"example.org"}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eu := ep("geo.example.org", "A", 60, "192.0.2.7")
	eu.SetIdentifier = "eu"
	changes := []events.Change{
		{New: ep("www.example.org", "A", 60, "192.0.2.1")},
		{New: ep("www.example.org", "TXT", 0, "heritage=external-dns")},
		{New: ep("api.example.org", "A", 0, "192.0.2.9")},
		{New: eu},
		{New: ep("geo.example.org", "A", 60, "192.0.2.8")},
	}
	if err := p.Apply(context.Background(), "example.org", changes); err != nil {
		t.Fatal(err)
	}
	got := providertest.ReadBackAgrees(t, p, "example.org", []string{"WWW.example.org.", "geo.example.org", "gone.example.org"}, p.RecordsAt)
	if len(got) != 4 {
		t.Fatalf("read back %d RRsets, want www's 2 and geo's 2: %v", len(got), got)
	}
	if _, err := p.RecordsAt(context.Background(), "example.net", []string{"www.example.net"}); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("unknown zone: %v, want a permanent error", err)
	}
}
