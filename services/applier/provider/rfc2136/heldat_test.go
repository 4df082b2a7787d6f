package rfc2136

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"
)

// TestHeldAtBelowAndPastItsIndex: a name's RRs are replaced by TTL-only
// edits and removed whatever the case of their owner or their TTL, the same
// below indexFrom (walked) and past it (indexed).
func TestHeldAtBelowAndPastItsIndex(t *testing.T) {
	rr := func(owner string, ttl, i int) dns.RR {
		r, err := dns.NewRR(fmt.Sprintf("%s %d IN A 10.0.%d.%d", owner, ttl, i/256, i%256))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, n := range []int{indexFrom / 2, 3 * indexFrom} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var h heldAt
			for i := range n {
				h.add(rr("big.example.org.", 300, i))
			}
			for i := 0; i < n; i += 3 { // a third get a new TTL
				h.add(rr("BIG.example.org.", 60, i))
			}
			for i := 1; i < n; i += 3 { // another third go
				h.remove(rr("Big.Example.Org.", 5, i))
			}
			h.remove(rr("big.example.org.", 300, n)) // never there
			if want := n - (n+1)/3; len(h.rrs) != want {
				t.Fatalf("%d RRs held, want %d", len(h.rrs), want)
			}
			for i := range n {
				at := h.find(rr("big.example.org.", 1, i))
				switch {
				case i%3 == 1 && at >= 0:
					t.Errorf("RR %d still held after its removal", i)
				case i%3 != 1 && at < 0:
					t.Errorf("RR %d lost", i)
				case i%3 == 0 && h.rrs[at].Header().Ttl != 60:
					t.Errorf("RR %d at TTL %d, want its new TTL 60", i, h.rrs[at].Header().Ttl)
				}
			}
			if (h.index != nil) != (n >= indexFrom) {
				t.Errorf("indexed: %v with %d RRs", h.index != nil, n)
			}
			for i, held := range h.rrs {
				if h.index != nil && h.index[rrID(held)] != i {
					t.Errorf("index puts %s at %d, it is at %d", held, h.index[rrID(held)], i)
				}
			}
		})
	}
}

// BenchmarkCopyOfOneLargeName is an AXFR of 20,000 RRs at one name (a
// large round robin) made into a zone copy.
func BenchmarkCopyOfOneLargeName(b *testing.B) {
	soa, _ := dns.NewRR("example.org. 300 IN SOA ns. host. 1 7200 3600 1209600 300")
	rrs := []dns.RR{soa}
	for i := range 20000 {
		r, _ := dns.NewRR(fmt.Sprintf("big.example.org. 300 IN A 10.%d.%d.%d", i>>16, i>>8&255, i&255))
		rrs = append(rrs, r)
	}
	for b.Loop() {
		if _, err := fullCopy(rrs); err != nil {
			b.Fatal(err)
		}
	}
}
