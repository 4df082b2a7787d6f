package events

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// shortCutOff makes a watch cut off after `after` for a test.
func shortCutOff(t *testing.T, after time.Duration) {
	was := cutOffRule
	cutOffRule = cutOffTimes{after: after, probe: after / 5}
	t.Cleanup(func() { cutOffRule = was })
}

// cutOffs records what the watches under ctx were cut off with.
type cutOffs struct {
	mu   sync.Mutex
	errs []error
}

func (c *cutOffs) take(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

func (c *cutOffs) get() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}

// TestWatchKeptFromItsStreamIsCutOff: a watch whose connection is cut
// while its stream goes on, long enough for a tombstone published then to
// expire, would resume after it and keep the deleted key forever. It is
// cut off instead, and delivers nothing more.
func TestWatchKeptFromItsStreamIsCutOff(t *testing.T) {
	shortCutOff(t, time.Second)
	url := natstest.Start(t, nil)
	_, direct := natstest.Connect(t, url)
	if err := EnsureStreams(t.Context(), direct); err != nil {
		t.Fatal(err)
	}
	relay := natstest.StartRelay(t, url)
	_, js := natstest.Connect(t, relay.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))

	cut := &cutOffs{}
	got := &sequences{}
	ctx := WithCutOff(t.Context(), cut.take)
	name := "gone.example.org"
	if _, _, err := Publish(ctx, direct, DesiredSubject(name), desired(name, "192.0.2.1"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, got.take); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the live state", func() bool { s, _ := got.snapshot(); return len(s) == 1 })

	relay.Cut()
	tomb, err := Message(DesiredSubject(name), &DesiredState{DNSName: name}, "")
	if err != nil {
		t.Fatal(err)
	}
	tomb.Header.Set(jetstream.MsgTTLHeader, "1s")
	if _, err := direct.PublishMsg(ctx, tomb); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tombstone to expire", func() bool {
		st, err := direct.Stream(ctx, StreamDesired)
		return err == nil && st.CachedInfo().State.Msgs == 0
	})
	time.Sleep(cutOffRule.after)
	relay.Open()

	waitFor(t, "the watch cut off", func() bool { return len(cut.get()) == 1 })
	if err := cut.get()[0]; !errors.Is(err, ErrCutOff) {
		t.Fatalf("cut off with %v, want ErrCutOff", err)
	}
	if _, _, err := Publish(ctx, direct, DesiredSubject("after.example.org"), desired("after.example.org", "192.0.2.2"), ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if s, _ := got.snapshot(); len(s) != 1 {
		t.Fatalf("a cut off watch delivered %v after its first message", s[1:])
	}
	if n := len(cut.get()); n != 1 {
		t.Fatalf("cut off %d times, want once", n)
	}
}

// TestLevelWatchIsNotCutOff: a watch that is level with its stream, quiet
// or busy, is never cut off, however long it runs: it asks the server.
func TestLevelWatchIsNotCutOff(t *testing.T) {
	// Long enough that a loaded machine answers a probe in time.
	shortCutOff(t, 3*time.Second)
	js := startJetStream(t)
	cut := &cutOffs{}
	got := &sequences{}
	ctx := WithCutOff(t.Context(), cut.take)
	if _, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, got.take); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * cutOffRule.after) // quiet
	want := publishSeqs(t, js, "busy", 60, 100*time.Millisecond)
	waitDelivered(t, got, want)
	time.Sleep(2 * cutOffRule.after) // quiet again
	if errs := cut.get(); len(errs) > 0 {
		t.Fatalf("a level watch was cut off: %v", errs)
	}
}

// TestWatchFarBehindItsStreamIsCutOff: a watch whose reader cannot keep
// up, so that the server still holds messages for it after CutOffAfter,
// is cut off: a tombstone could expire before it is read.
func TestWatchFarBehindItsStreamIsCutOff(t *testing.T) {
	shortCutOff(t, 500*time.Millisecond)
	js := startJetStream(t)
	publishSeqs(t, js, "backlog", 2000, 0)
	cut := &cutOffs{}
	stuck := make(chan struct{})
	defer close(stuck)
	ctx := WithCutOff(t.Context(), cut.take)
	if _, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, func(Received) { <-stuck }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch cut off", func() bool { return len(cut.get()) > 0 })
}

// TestWatchBehindButKeepingUpIsNotCutOff: a watch that stays behind its
// stream for longer than CutOffAfter, reading messages stored moments
// ago, as a stage does while it reads its first million names, is not cut
// off: it has read everything stored before the message it reads. By the
// server's count alone it is never level, and was cut off.
func TestWatchBehindButKeepingUpIsNotCutOff(t *testing.T) {
	// Long enough that a step of the loop below may take 13 ms on a
	// loaded machine and the watch still reads messages stored within it.
	shortCutOff(t, 8*time.Second)
	js := startJetStream(t)
	// More than the client pulls ahead (500 messages), so that the server
	// always holds some for the watch; then one message read for each one
	// stored, for twice CutOffAfter.
	const backlog = 600
	want := publishSeqs(t, js, "backlog", backlog, 0)
	cut := &cutOffs{}
	got := &sequences{}
	turns := make(chan struct{})
	ctx := WithCutOff(t.Context(), cut.take)
	inTurn := func(r Received) { <-turns; got.take(r) }
	if _, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, inTurn); err != nil {
		t.Fatal(err)
	}
	for start, i := time.Now(), 0; time.Since(start) < 2*cutOffRule.after; i++ {
		want = append(want, publishSeqs(t, js, fmt.Sprintf("steady%d-", i), 1, 0)...)
		select {
		case turns <- struct{}{}:
		case <-time.After(cutOffRule.after):
			t.Fatalf("the watch stopped reading after %d messages; cut off with %v", i, cut.get())
		}
		time.Sleep(time.Millisecond)
	}
	close(turns)
	waitDelivered(t, got, want)
	if errs := cut.get(); len(errs) > 0 {
		t.Fatalf("a watch reading messages stored moments ago was cut off: %v", errs)
	}
}

// TestWatchWithoutHandlerStartsOver: a watch nobody asked to be told about
// being cut off reads every subject's last message again instead.
func TestWatchWithoutHandlerStartsOver(t *testing.T) {
	shortCutOff(t, 500*time.Millisecond)
	js := startJetStream(t)
	first := publishSeqs(t, js, "kept", 3, 0)
	got := &sequences{}
	w, err := startWatch(t.Context(), js, StreamDesired, []string{SubjectDesired + ".>"}, got.take)
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, got, first)
	w.mu.Lock()
	w.level = time.Now().Add(-time.Hour) // as if away for an hour
	w.mu.Unlock()
	waitFor(t, "every subject read again", func() bool { s, _ := got.snapshot(); return len(s) >= 6 })
}
