package events

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// reconnectingBus is a JetStream server behind a relay: reconnect cuts
// the client off and waits until it is back.
func reconnectingBus(t *testing.T) (js jetstream.JetStream, reconnect func()) {
	t.Helper()
	relay := natstest.StartRelay(t, natstest.Start(t, nil))
	_, js = natstest.Connect(t, relay.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err := EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return js, func() {
		t.Helper()
		n := Reconnects(js)
		relay.Cut()
		relay.Open()
		for deadline := time.Now().Add(10 * time.Second); Reconnects(js) == n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no reconnect")
			}
		}
	}
}

// TestLastAckKeptUntilLostOrReplaced checks what a stage believes after a
// reconnect: what it published is kept while the stream holds the newest
// message acknowledged before the reconnect as published, and not once
// it is gone or another message stands on its subject.
func TestLastAckKeptUntilLostOrReplaced(t *testing.T) {
	js, reconnect := reconnectingBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := NewLastAck(js, StreamDesired)
	kept := func() bool {
		t.Helper()
		reconnect()
		ok, err := l.Kept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	publish := func(name, ip string) {
		t.Helper()
		if _, _, err := l.Publish(ctx, DesiredSubject(name), desired(name, ip), ""); err != nil {
			t.Fatal(err)
		}
	}
	if !kept() {
		t.Fatal("nothing published since the start's read-back, yet not kept")
	}
	publish("a.example.com", "192.0.2.1")
	publish("b.example.com", "192.0.2.1")
	// An acknowledgement of another stream is not this one's.
	epoch := l.Epoch()
	_, ack, err := Publish(ctx, js, ObservedSubject("rfc2136", "a.example.com"), &ObservedState{DNSName: "a.example.com", Provider: "rfc2136"}, "")
	if err != nil {
		t.Fatal(err)
	}
	l.Note(epoch, ObservedSubject("rfc2136", "a.example.com"), "", ack)
	if !kept() {
		t.Fatal("the newest acknowledged message is in the stream, yet not kept")
	}

	// Replaced: a newer message on its subject (the stream keeps one per
	// subject), by another writer.
	publish("c.example.com", "192.0.2.1")
	if _, _, err := Publish(ctx, js, DesiredSubject("c.example.com"), desired("c.example.com", "192.0.2.2"), ""); err != nil {
		t.Fatal(err)
	}
	if kept() {
		t.Fatal("another message stands on the subject, yet kept")
	}

	l.ReadBack(l.Epoch()) // the stage read back

	// Lost: the server no longer has it.
	hash, ack, err := Publish(ctx, js, DesiredSubject("d.example.com"), desired("d.example.com", "192.0.2.4"), "")
	if err != nil {
		t.Fatal(err)
	}
	l.Note(l.Epoch(), DesiredSubject("d.example.com"), hash, ack)
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	if kept() {
		t.Fatal("the newest acknowledged message is gone, yet kept")
	}
	// Every check removed its consumer.
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Fatalf("%d consumers left behind", info.State.Consumers)
	}
}

// TestLastAckChecksOnlyWhatCameBeforeTheReconnect: a server restart may
// lose the newest messages it acknowledged, and what the stage publishes
// after it takes their sequences. The check looks at the newest message
// acknowledged before the reconnect, so a later one cannot vouch for it,
// and an acknowledgement whose publish began before the reconnect leaves
// the check unknown (read back).
func TestLastAckChecksOnlyWhatCameBeforeTheReconnect(t *testing.T) {
	js, reconnect := reconnectingBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLastAck(js, StreamDesired)

	_, lost, err := l.Publish(ctx, DesiredSubject("lost.example.com"), desired("lost.example.com", "192.0.2.1"), "")
	if err != nil {
		t.Fatal(err)
	}
	reconnect()
	if err := st.DeleteMsg(ctx, lost.Sequence); err != nil { // lost with the server
		t.Fatal(err)
	}
	if _, _, err := l.Publish(ctx, DesiredSubject("after.example.com"), desired("after.example.com", "192.0.2.2"), ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Kept(ctx); err != nil || ok {
		t.Fatalf("a message published after the reconnect vouched for one lost before it: kept %v, %v", ok, err)
	}

	// Published in one epoch, acknowledged in the next.
	epoch := l.Epoch()
	hash, ack, err := Publish(ctx, js, DesiredSubject("late.example.com"), desired("late.example.com", "192.0.2.3"), "")
	if err != nil {
		t.Fatal(err)
	}
	reconnect()
	l.Note(epoch, DesiredSubject("late.example.com"), hash, ack)
	if ok, err := l.Kept(ctx); err != nil || ok {
		t.Fatalf("an acknowledgement that crossed the reconnect was taken as proof: kept %v, %v", ok, err)
	}
	l.ReadBack(l.Epoch()) // the stage read back
	if ok, err := l.Kept(ctx); err != nil || !ok {
		t.Fatalf("nothing published since the read-back, yet not kept: %v", err)
	}
}

// TestFailedCheckHoldsUntilReadBack: a check that fails keeps failing
// until the stage has read back; a read-back that failed in turn must not
// let the next check pass for want of anything left to check.
func TestFailedCheckHoldsUntilReadBack(t *testing.T) {
	js, reconnect := reconnectingBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := NewLastAck(js, StreamDesired)
	_, ack, err := l.Publish(ctx, DesiredSubject("lost.example.com"), desired("lost.example.com", "192.0.2.1"), "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	reconnect()
	for i := range 2 { // the stage's read-back failed after the first
		if ok, err := l.Kept(ctx); err != nil || ok {
			t.Fatalf("check %d after the loss passed: kept %v, %v", i+1, ok, err)
		}
	}
	// Read back, but across another reconnect: still not settled.
	epoch := l.Epoch()
	reconnect()
	l.ReadBack(epoch)
	if ok, _ := l.Kept(ctx); ok {
		t.Fatal("a read-back begun before the last reconnect settled the check")
	}
	l.ReadBack(l.Epoch())
	if ok, err := l.Kept(ctx); err != nil || !ok {
		t.Fatalf("after the read-back: kept %v, %v", ok, err)
	}
}
