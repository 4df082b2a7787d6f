package events

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// fastPace shortens the watch's paces for a test.
func fastPace(t *testing.T) {
	was := atRest
	atRest = restPace{after: 300 * time.Millisecond, expiry: 2 * time.Second, heartbeat: time.Second}
	t.Cleanup(func() { atRest = was })
}

// sequences records what a watch delivered, in order.
type sequences struct {
	mu   sync.Mutex
	seqs []uint64
	live []bool
}

func (s *sequences) take(r Received) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs = append(s.seqs, r.Seq)
	s.live = append(s.live, r.Live)
}

func (s *sequences) snapshot() ([]uint64, []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seqs), slices.Clone(s.live)
}

func (w *watch) pace() (quiet bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.quiet
}

// publishSeqs publishes n desired states, one every gap, and returns
// their stream sequences. A publish that fails (the client reconnecting to
// a restarted server) is tried again for up to 15 s.
func publishSeqs(t *testing.T, js jetstream.JetStream, prefix string, n int, gap time.Duration) []uint64 {
	t.Helper()
	var seqs []uint64
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; i < n; {
		name := fmt.Sprintf("%s%d.example.org", prefix, i)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, ack, err := Publish(ctx, js, DesiredSubject(name), desired(name, "192.0.2.1"), "")
		cancel()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		seqs = append(seqs, ack.Sequence)
		i++
		time.Sleep(gap)
	}
	return seqs
}

// waitDelivered waits until the watch delivered exactly want, in order.
func waitDelivered(t *testing.T, got *sequences, want []uint64) []bool {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		seqs, live := got.snapshot()
		if slices.Equal(seqs, want) {
			return live
		}
		if len(seqs) > len(want) || time.Now().After(deadline) {
			t.Fatalf("delivered %v, want %v once each, in order", seqs, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchGoesQuietOnceCaughtUpAndLosesNothing: a caught-up watch moves
// to rest's pace by starting its consumer again after the last message it
// delivered; messages published across the switch arrive once each, in
// order, and live.
func TestWatchGoesQuietOnceCaughtUpAndLosesNothing(t *testing.T) {
	fastPace(t)
	js := startJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	history := publishSeqs(t, js, "old", 5, 0)
	got := &sequences{}
	w, err := startWatch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, got.take)
	if err != nil {
		t.Fatal(err)
	}
	<-w.caughtUp
	if w.pace() {
		t.Fatal("the watch is at rest's pace before atRest.after")
	}
	// Published over three times atRest.after: the switch happens meanwhile.
	news := publishSeqs(t, js, "new", 30, 30*time.Millisecond)
	live := waitDelivered(t, got, append(slices.Clone(history), news...))
	for i, l := range live {
		if l != (i >= len(history)) {
			t.Fatalf("message %d: live %v; history is what was there when the watch began", i, l)
		}
	}
	if !w.pace() {
		t.Fatal("the caught-up watch never went to rest's pace")
	}
	// At rest's pace a new message still arrives.
	more := publishSeqs(t, js, "more", 1, 0)
	waitDelivered(t, got, append(append(slices.Clone(history), news...), more...))
}

// TestWatchBackToTheShortPaceAfterAReconnect: after NATS reconnected, the
// watch pulls at the short pace again (a stranded pull on a restarted
// server is replaced within seconds), then goes quiet again, losing
// nothing.
func TestWatchBackToTheShortPaceAfterAReconnect(t *testing.T) {
	fastPace(t)
	js := startJetStream(t)
	w, got := quietWatch(t, js)
	before := publishSeqs(t, js, "before", 3, 0)
	if err := js.Conn().ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the short pace after the reconnect", func() bool { return !w.pace() })
	after := publishSeqs(t, js, "after", 3, 0)
	waitDelivered(t, got, append(before, after...))
	waitFor(t, "rest's pace again", w.pace)
}

// quietWatch watches the desired stream until the test ends, and returns
// once the watch is at rest's pace.
func quietWatch(t *testing.T, js jetstream.JetStream) (*watch, *sequences) {
	t.Helper()
	got := &sequences{}
	w, err := startWatch(t.Context(), js, StreamDesired, []string{SubjectDesired + ".>"}, got.take)
	if err != nil {
		t.Fatal(err)
	}
	<-w.caughtUp
	waitFor(t, "rest's pace", w.pace)
	return w, got
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestQuietWatchFollowsAcrossAServerRestart: a watch at rest's pace whose
// server restarts (same store, same port) delivers what is published
// after the restart, and what was published before, once each.
func TestQuietWatchFollowsAcrossAServerRestart(t *testing.T) {
	fastPace(t)
	opts := &server.Options{JetStream: true, StoreDir: t.TempDir(), Host: "127.0.0.1", Port: freePort(t)}
	run := func() *server.Server { return natstest.Run(t, opts) }
	s := run()
	_, js := natstest.Connect(t, s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err := EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	w, got := quietWatch(t, js)
	before := publishSeqs(t, js, "before", 3, 0)
	waitDelivered(t, got, before)
	s.Shutdown()
	s.WaitForShutdown()
	s = run()
	t.Cleanup(s.Shutdown)
	after := publishSeqs(t, js, "after", 3, 0)
	// Right after a restart the server may report a last sequence below
	// what was delivered (seen here), and the watch then reads every
	// subject again: allowed, each message being its key's whole state.
	// Lost is not.
	want := append(before, after...)
	waitFor(t, "every message delivered", func() bool {
		seqs, _ := got.snapshot()
		return len(seqs) >= len(want) && !slices.ContainsFunc(want, func(s uint64) bool { return !slices.Contains(seqs, s) })
	})
	waitFor(t, "rest's pace again", w.pace)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestReplayVerdict: a quiet replay is done only when the server has
// nothing more and fn has had all it sent; a count above zero that brings
// nothing is made again, but only where the replay can resume.
func TestReplayVerdict(t *testing.T) {
	for _, c := range []struct {
		pending                        uint64
		handedAll, distrust, resumable bool
		want                           replayAction
	}{
		{0, true, false, true, replayDone},
		{0, true, true, false, replayDone},
		{0, false, true, true, replayWait}, // sent, still in the client's buffer or in fn
		{3, true, false, true, replayWait}, // may be on its way
		{3, true, true, true, replayRecount},
		{3, true, true, false, replayWait},
		{3, false, true, true, replayWait},
	} {
		if got := replayVerdict(c.pending, c.handedAll, c.distrust, c.resumable); got != c.want {
			t.Errorf("replayVerdict(%d pending, handed all %t, distrust %t, resumable %t) = %d, want %d",
				c.pending, c.handedAll, c.distrust, c.resumable, got, c.want)
		}
	}
}

// deliveredMsg is a message as a consumer delivers it: only what deliver
// reads.
type deliveredMsg struct {
	jetstream.Msg
	meta jetstream.MsgMetadata
}

func (m deliveredMsg) Metadata() (*jetstream.MsgMetadata, error) { return &m.meta, nil }
func (m deliveredMsg) Subject() string                           { return "zs.desired.test.a" }
func (m deliveredMsg) Headers() nats.Header                      { return nil }
func (m deliveredMsg) Data() []byte                              { return nil }

// TestWatchHandsOnNothingOnceItsServerIsLost: what a consumer delivers
// after the connection lost the server it was made on (nats.go may make
// it again on the restarted server, after the highest sequence it had)
// waits until the guard has checked what the server still holds.
func TestWatchHandsOnNothingOnceItsServerIsLost(t *testing.T) {
	var handed []uint64
	life, lose := context.WithCancel(context.Background())
	w := &watch{life: life, caughtUp: make(chan struct{}), fn: func(r Received) { handed = append(handed, r.Seq) }}
	msg := func(seq uint64) deliveredMsg {
		return deliveredMsg{meta: jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: seq, Consumer: seq}, Timestamp: time.Unix(int64(seq), 0)}}
	}
	w.deliver(msg(4))
	lose()
	w.deliver(msg(9))
	if !slices.Equal(handed, []uint64{4}) || w.seen != 4 || !w.seenAt.Equal(time.Unix(4, 0)) {
		t.Fatalf("handed %v, seen %d at %v; want only 4, before the server was lost", handed, w.seen, w.seenAt)
	}
}
