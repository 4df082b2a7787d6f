package events

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// TestPublishAllLandsEveryMessageAndRefusesTheTooLarge: more messages than
// the window all land, each acknowledged once and noted; one over the
// server's max payload fails at once, final, as ErrTooLarge, and holds
// back none of the others.
func TestPublishAllLandsEveryMessageAndRefusesTheTooLarge(t *testing.T) {
	_, js := natstest.Connect(t, natstest.Start(t, &server.Options{JetStream: true, MaxPayload: 4 << 10}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	const n = 3*AsyncWindow + 7
	const big = 100
	var msgs []*nats.Msg
	for i := range n {
		name := fmt.Sprintf("n%d.example.org", i)
		d := desired(name, fmt.Sprintf("10.0.%d.%d", i>>8, i&255))
		if i == big {
			for j := range 1000 {
				d.Endpoints[0].Targets = append(d.Endpoints[0].Targets, fmt.Sprintf("10.1.%d.%d", j>>8, j&255))
			}
		}
		m, err := Message(DesiredSubject(name), d, "")
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	l := NewLastAck(js, StreamDesired)
	acked := map[int]uint64{}
	var failures []int
	err := l.PublishAll(ctx, msgs, func(i int, ack *jetstream.PubAck) {
		if _, twice := acked[i]; twice {
			t.Errorf("message %d acknowledged twice", i)
		}
		acked[i] = ack.Sequence
	}, func(i int, err error, final bool) {
		if i != big || !final || !errors.Is(err, ErrTooLarge) {
			t.Errorf("message %d failed (final %t): %v", i, final, err)
		}
		failures = append(failures, i)
	})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("PublishAll returned %v, want ErrTooLarge", err)
	}
	if len(acked) != n-1 || len(failures) != 1 {
		t.Fatalf("%d acknowledged, %d failed; want %d and 1", len(acked), len(failures), n-1)
	}
	info, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.CachedInfo().State.Msgs; got != n-1 {
		t.Errorf("the stream holds %d messages, want %d", got, n-1)
	}
	l.mu.Lock()
	newest := l.newest
	l.mu.Unlock()
	if newest.seq != uint64(n-1) || newest.subject != msgs[n-1].Subject {
		t.Errorf("newest acknowledgement noted: %+v, want seq %d on %s", newest, n-1, msgs[n-1].Subject)
	}
}
