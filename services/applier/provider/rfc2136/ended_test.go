package rfc2136_test

import (
	"context"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
)

// An UPDATE whose call has ended (the applier's lease lost, its deadline
// passed) is not sent, even over a connection already open: a
// connection's own timeouts would let it through.
func TestNothingIsSentOnceTheCallHasEnded(t *testing.T) {
	s := bind.StartT(t, "example.org")
	p := newProvider(t, s, nil)
	if err := p.Apply(context.Background(), "example.org", []events.Change{{New: ep("first.example.org", "A", 0, "192.0.2.1")}}); err != nil {
		t.Fatal(err) // leaves its connection open for the next UPDATE
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Apply(ended, "example.org", []events.Change{{New: ep("late.example.org", "A", 0, "192.0.2.1")}}); err == nil {
		t.Fatal("an UPDATE was applied after its call ended")
	}
	if rrs, err := s.Query("late.example.org", dns.TypeA); err != nil || len(rrs) != 0 {
		t.Fatalf("BIND holds %v (%v) sent after the call ended", rrs, err)
	}
}
