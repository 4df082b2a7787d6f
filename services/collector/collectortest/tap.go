package collectortest

import (
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// The sources stream keeps one message per subject, so what a collector
// published over time is read from a tap on the bus: a plain subscription
// to every source subject, taken before any test runs.
var published = &tap{bySubject: map[string][]events.Received{}}

type tap struct {
	nc  *nats.Conn
	sub *nats.Subscription
	mu  sync.Mutex
	// bySubject holds every message seen on each subject, oldest first;
	// seen counts them all.
	bySubject map[string][]events.Received
	seen      uint64
}

func (t *tap) start(nc *nats.Conn) (err error) {
	t.nc = nc
	t.sub, err = nc.Subscribe(events.SubjectSources+".>", func(m *nats.Msg) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.bySubject[m.Subject] = append(t.bySubject[m.Subject], events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data})
		t.seen++
	})
	return err
}

// messages returns what was published on subj so far: everything the
// stream has acknowledged was sent to the tap before the stream stored
// it, so once a flush is answered and the handler has taken every
// delivered message, nothing acknowledged is missing.
func (t *tap) messages(tb testing.TB, subj string) []events.Received {
	tb.Helper()
	if err := t.nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(WaitFor)
	for {
		delivered, err := t.sub.Delivered()
		if err != nil {
			tb.Fatal(err)
		}
		t.mu.Lock()
		if t.seen >= uint64(delivered) {
			out := append([]events.Received(nil), t.bySubject[subj]...)
			t.mu.Unlock()
			return out
		}
		t.mu.Unlock()
		if time.Now().After(deadline) {
			tb.Fatal("the tap on the sources' subjects fell behind")
		}
		time.Sleep(time.Millisecond)
	}
}

// History is every message published on subj, oldest first.
func History(tb testing.TB, subj string) []events.Received {
	tb.Helper()
	return published.messages(tb, subj)
}

// isTombstone tells a tombstone by the TTL only tombstones carry.
func isTombstone(r events.Received) bool { return r.Header.Get(jetstream.MsgTTLHeader) != "" }
