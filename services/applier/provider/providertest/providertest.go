// Package providertest holds what provider tests share: reading a real DNS
// server's answers in the form providers give targets, and finding an
// RRset in a listing.
package providertest

import (
	"context"
	"reflect"
	"slices"
	"testing"

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
