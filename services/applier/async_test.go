package applier_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
)

// flakyAsync fails some async publishes of observed state: refused at
// once, failed without being sent, or sent with the ack lost.
type flakyAsync struct {
	jetstream.JetStream
	n atomic.Int64
}

func (f *flakyAsync) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	if !strings.HasPrefix(m.Subject, events.SubjectObserved+".") {
		return f.JetStream.PublishMsgAsync(m, opts...)
	}
	switch f.n.Add(1) % 4 {
	case 1:
		return nil, errors.New("injected: refused")
	case 2:
		return failedFuture{m}, nil
	case 3:
		if _, err := f.JetStream.PublishMsgAsync(m, opts...); err != nil {
			return nil, err
		}
		return failedFuture{m}, nil
	}
	return f.JetStream.PublishMsgAsync(m, opts...)
}

type failedFuture struct{ m *nats.Msg }

func (failedFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (failedFuture) Err() <-chan error {
	ch := make(chan error, 1)
	ch <- errors.New("injected: ack lost")
	return ch
}
func (f failedFuture) Msg() *nats.Msg { return f.m }

// TestAsyncObservedFallback: observed states whose async publish fails
// are published again, synchronously, after the plan's result that
// carries them all; one that landed anyway is not stored twice.
func TestAsyncObservedFallback(t *testing.T) {
	js := bus(t)
	b := bind.StartT(t, zone)
	start(t, &flakyAsync{JetStream: js}, rfcConfig(b, time.Hour))

	plan := &events.Plan{ID: "f1", Provider: "rfc2136", Zone: zone}
	const n = 20
	for i := range n {
		plan.Changes = append(plan.Changes, events.Change{New: ep(fmt.Sprintf("n%d.example.org", i), "A", fmt.Sprintf("192.0.2.%d", i+1))})
	}
	_, before := lastSeq(t, js, events.StreamObserved)
	sendPlan(t, js, plan)
	res, _ := waitResult(t, js, "f1")
	if res.Status != events.ResultApplied {
		t.Fatalf("f1: %+v", res)
	}
	for i := range n {
		st, m := observed(t, js, fmt.Sprintf("n%d.example.org", i))
		if st == nil || len(st.Records) != 1 || st.Records[0].Targets[0] != fmt.Sprintf("192.0.2.%d", i+1) {
			t.Fatalf("n%d: %+v", i, st)
		}
		if m.Sequence <= res.ObservedSeq {
			t.Fatalf("n%d at seq %d, not after the result's read-back (ObservedSeq %d)", i, m.Sequence, res.ObservedSeq)
		}
	}
	if len(res.Observed) != n {
		t.Fatalf("the result carries %d observed states, want %d", len(res.Observed), n)
	}
	if _, after := lastSeq(t, js, events.StreamObserved); after-before != n {
		t.Fatalf("%d observed states stored for %d names", after-before, n)
	}
}
