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

// heldAcks holds back the acknowledgements of observed states of one
// name until release is closed: a store that takes its time, as one into
// an old block of a large stream does.
type heldAcks struct {
	jetstream.JetStream
	subject string
	release chan struct{}
}

func (h *heldAcks) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f, err := h.JetStream.PublishMsgAsync(m, opts...)
	if err != nil || m.Subject != h.subject {
		return f, err
	}
	return heldFuture{PubAckFuture: f, release: h.release}, nil
}

type heldFuture struct {
	jetstream.PubAckFuture
	release <-chan struct{}
}

func (f heldFuture) Ok() <-chan *jetstream.PubAck {
	ch := make(chan *jetstream.PubAck, 1)
	go func() {
		<-f.release
		ch <- <-f.PubAckFuture.Ok()
	}()
	return ch
}

// TestResultDoesNotWaitForOtherNamesStores: while a plan's observed
// states are still being stored, the next plan's result goes out at once
// when it touches none of their names, and only once they are stored
// when it touches one: the states it compares with, and what its
// ObservedSeq must cover.
func TestResultDoesNotWaitForOtherNamesStores(t *testing.T) {
	js := bus(t)
	b := bind.StartT(t, zone)
	held := &heldAcks{JetStream: js, subject: events.ObservedSubject("rfc2136", "slow.example.org"), release: make(chan struct{})}
	start(t, held, rfcConfig(b, time.Hour))

	sendPlan(t, js, &events.Plan{ID: "s1", Provider: "rfc2136", Zone: zone, Changes: []events.Change{{New: ep("slow.example.org", "A", "192.0.2.1")}}})
	resultOnly(t, js, "s1") // its store is held from now on
	sendPlan(t, js, &events.Plan{ID: "s2", Provider: "rfc2136", Zone: zone, Changes: []events.Change{{New: ep("other.example.org", "A", "192.0.2.2")}}})
	resultOnly(t, js, "s2") // while slow's store is held

	sendPlan(t, js, &events.Plan{ID: "s3", Provider: "rfc2136", Zone: zone, Changes: []events.Change{{
		Old: ep("slow.example.org", "A", "192.0.2.1"), New: ep("slow.example.org", "A", "192.0.2.3")}}})
	time.Sleep(500 * time.Millisecond)
	if res, _, ok := lastResultMsg(t, js, "rfc2136"); !ok || res.PlanID != "s2" {
		t.Fatalf("last result %+v, want s2's: s3's went out while the observed state of its name was still being stored", res)
	}
	close(held.release)
	res, _ := waitResult(t, js, "s3")
	slow, m := observed(t, js, "slow.example.org")
	if slow == nil || slow.Records[0].Targets[0] != "192.0.2.3" || m.Sequence <= res.ObservedSeq {
		t.Fatalf("slow after s3: %+v at seq %d; s3's ObservedSeq %d", slow, m.Sequence, res.ObservedSeq)
	}
}

// resultOnly waits for the result of plan planID, not for what it carries
// to be stored.
func resultOnly(t *testing.T, js jetstream.JetStream, planID string) {
	t.Helper()
	waitFor(t, "result of plan "+planID, func() bool {
		res, _, ok := lastResultMsg(t, js, "rfc2136")
		return ok && res.PlanID == planID
	})
}
