package events

import (
	"context"
	"testing"
	"time"
)

// TestLastAckKeptUntilLostOrReplaced checks what a stage believes after a
// reconnect: its newest acknowledged message is kept while the stream holds
// it as published, and not once it is gone or another message stands on
// its subject.
func TestLastAckKeptUntilLostOrReplaced(t *testing.T) {
	js := startJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kept := func(l *LastAck) bool {
		t.Helper()
		ok, err := l.Kept(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	l := NewLastAck(StreamDesired)
	if kept(l) {
		t.Fatal("nothing noted, yet kept: the caller would skip its read-back")
	}
	// Noted out of order, as concurrent publishers may: the newest counts.
	var acks []func()
	for _, name := range []string{"a.example.com", "b.example.com"} {
		hash, ack, err := Publish(ctx, js, DesiredSubject(name), desired(name, "192.0.2.1"), "")
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, func() { l.Note(DesiredSubject(name), hash, ack) })
	}
	acks[1]()
	acks[0]()
	// An acknowledgement of another stream is not this one's.
	_, ack, err := Publish(ctx, js, ObservedSubject("rfc2136", "a.example.com"), &ObservedState{DNSName: "a.example.com", Provider: "rfc2136"}, "")
	if err != nil {
		t.Fatal(err)
	}
	l.Note(ObservedSubject("rfc2136", "a.example.com"), "", ack)
	if !kept(l) {
		t.Fatal("the newest acknowledged message is in the stream, yet not kept")
	}

	// Replaced: a newer message on its subject (the stream keeps one per subject).
	if _, _, err := Publish(ctx, js, DesiredSubject("b.example.com"), desired("b.example.com", "192.0.2.2"), ""); err != nil {
		t.Fatal(err)
	}
	if kept(l) {
		t.Fatal("another message stands on the subject, yet kept")
	}

	// Lost: the server no longer has it.
	hash, ack, err := Publish(ctx, js, DesiredSubject("d.example.com"), desired("d.example.com", "192.0.2.4"), "")
	if err != nil {
		t.Fatal(err)
	}
	l.Note(DesiredSubject("d.example.com"), hash, ack)
	if !kept(l) {
		t.Fatal("the newest acknowledged message is in the stream, yet not kept")
	}
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	if kept(l) {
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
