package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// decodeCostBound is what a test lets one decode allocate: twice the
// budget checkShape counts, for what it does not (Go rounds allocations
// up to its size classes, msgpack has its own).
func decodeCostBound(size int) uint64 { return uint64(2 * (maxExpansion*size + expansionSlack)) }

// sourceWith encodes a SourceState of the test object whose endpoints
// array holds n copies of elem, as a crafted message would.
func sourceWith(n int, elem []byte) []byte {
	head := []byte("\x82\xa6object\x84\xa7cluster\xa1c\xa6source\xa7service\xa9namespace\xa2ns\xa4name\xa3web\xa9endpoints\xdd")
	b := binary.BigEndian.AppendUint32(head, uint32(n))
	return append(b, bytes.Repeat(elem, n)...)
}

// oneEndpointWith encodes a SourceState with one endpoint whose targets
// array holds n copies of elem.
func oneEndpointWith(n int, elem []byte) []byte {
	ep := []byte("\x83\xa7dnsName\xafwww.example.org\xaarecordType\xa1A\xa7targets\xdd")
	ep = binary.BigEndian.AppendUint32(ep, uint32(n))
	ep = append(ep, bytes.Repeat(elem, n)...)
	return sourceWith(1, ep)
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeCostsASmallConstantTimesTheMessage: a message of 1 MB whose
// endpoints are each one byte (nil, or an empty map) decoded into 999,900
// endpoints of 112 bytes: 213 MB allocated. Each crafted shape, over and
// under the limits, now costs its reader at most a small constant times
// its size; those over a limit are rejected as undecodable.
func TestDecodeCostsASmallConstantTimesTheMessage(t *testing.T) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	good, err := Message(ref.Subject(), &SourceState{Object: ref}, "")
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1 << 20
	for _, tc := range []struct {
		name   string
		data   []byte
		reject string // "" : decodes
	}{
		{"1 MB of nil endpoints", sourceWith(mb-100, []byte{0xc0}), "endpoints"},
		{"1 MB of empty endpoints", sourceWith(mb-100, []byte{0x80}), "endpoints"},
		{"nil endpoints at the cap", sourceWith(MaxEndpoints, []byte{0xc0}), "times its size"},
		{"nil endpoints within the budget", sourceWith(200, []byte{0xc0}), ""},
		{"1 MB of nil targets", oneEndpointWith(mb-200, []byte{0xc0}), "targets"},
		{"empty targets at the cap", oneEndpointWith(MaxTargets, []byte{0xa0}), "times its size"},
		{"short targets at the cap", oneEndpointWith(MaxTargets, []byte("\xa810.0.0.1")), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st SourceState
			var err error
			alloc := allocated(func() {
				err = Decode(Received{Subject: ref.Subject(), Header: good.Header, Data: tc.data}, &st)
			})
			t.Logf("%d bytes: %d allocated, %.2f per byte (%v)", len(tc.data), alloc, float64(alloc)/float64(len(tc.data)), err)
			switch {
			case tc.reject == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.reject != "" && (!errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tc.reject)):
				t.Fatalf("got %v, want ErrUndecodable for %s", err, tc.reject)
			}
			if bound := decodeCostBound(len(tc.data)); alloc > bound {
				t.Errorf("decoding %d bytes allocated %d, more than %d", len(tc.data), alloc, bound)
			}
			alloc = allocated(func() { _, err = ToJSON(tc.data) })
			if bound := decodeCostBound(len(tc.data)); alloc > bound {
				t.Errorf("ToJSON of %d bytes allocated %d, more than %d (%v)", len(tc.data), alloc, bound, err)
			}
		})
	}
}

// TestWriterRefusesWhatReadersReject: an event over a limit is not
// published (ErrTooLarge, which the collector reports on the object);
// one at the limits is, and reads back.
func TestWriterRefusesWhatReadersReject(t *testing.T) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	endpoints := func(n, targets int) *SourceState {
		st := &SourceState{Object: ref}
		for i := range n {
			ep := NewEndpoint(fmt.Sprintf("n%d.example.org", i), "A", 0)
			for j := range targets {
				ep.Targets = append(ep.Targets, fmt.Sprintf("10.%d.%d.%d", j>>16, j>>8&255, j&255))
			}
			st.Endpoints = append(st.Endpoints, ep)
		}
		return st
	}
	for name, tc := range map[string]struct {
		st     *SourceState
		refuse bool
	}{
		"endpoints at the cap":      {endpoints(MaxEndpoints, 1), false},
		"targets at the cap":        {endpoints(1, MaxTargets), false},
		"one endpoint over the cap": {endpoints(MaxEndpoints+1, 1), true},
		"one target over the cap":   {endpoints(1, MaxTargets+1), true},
	} {
		t.Run(name, func(t *testing.T) {
			msg, err := Message(ref.Subject(), tc.st, "")
			if tc.refuse {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("published: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var back SourceState
			if err := Decode(Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data}, &back); err != nil {
				t.Fatalf("a reader rejects what was published: %v", err)
			}
		})
	}
}
