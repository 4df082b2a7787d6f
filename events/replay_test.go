package events

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// TestReplayOfAWholeStreamDoesNotCrawlPastTombstones: the planner and the
// portal watch ZS_OBSERVED whole (observed names and zone lists). On a bus
// that has seen many names come and go, that stream is mostly deleted
// messages (each name's last state replaced by its tombstone). nats-server
// walks a consumer with several filters through them far slower than one
// with a single filter: a restarted planner took minutes to replay it,
// growing with every name ever removed. The replay of the whole stream
// must cost what the replay of one of its subject trees costs.
func TestReplayOfAWholeStreamDoesNotCrawlPastTombstones(t *testing.T) {
	const names = 20000
	url := natstest.Start(t, nil)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	publish := func(subject string, ev Event) {
		msg, err := Message(subject, ev, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
	}
	for i := range names {
		name := fmt.Sprintf("gone%d.example.org", i)
		held := &ObservedState{Provider: "p", Zone: "example.org", DNSName: name,
			Records: []Endpoint{NewEndpoint(name, "A", 0, "192.0.2.1")}}
		publish(ObservedSubject("p", name), held)
		publish(ObservedSubject("p", name), &ObservedState{Provider: "p", Zone: "example.org", DNSName: name})
		if i%1000 == 999 {
			<-js.PublishAsyncComplete()
		}
	}
	publish(ZonesSubject("p"), &ZoneList{Provider: "p", Zones: []string{"example.org"}})
	<-js.PublishAsyncComplete()

	replay := func(filters ...string) (int, time.Duration) {
		start, n := time.Now(), 0
		if err := ReadLast(ctx, js, StreamObserved, filters, func(Received) { n++ }); err != nil {
			t.Fatal(err)
		}
		return n, time.Since(start)
	}
	oneTree, oneTook := replay(SubjectObserved + ".>")
	whole, wholeTook := replay(SubjectObserved+".>", SubjectZones+".>")
	t.Logf("replay of %d tombstones: one subject tree %s, the whole stream %s", names, oneTook, wholeTook)
	if oneTree != names || whole != names+1 {
		t.Fatalf("replayed %d observed states and %d messages of the whole stream, want %d and %d", oneTree, whole, names, names+1)
	}
	// Before: about sixty times slower; the margin is for a busy machine.
	if wholeTook > 5*oneTook+time.Second {
		t.Fatalf("replaying the whole stream took %s, replaying its observed names %s: it crawls past the tombstones", wholeTook, oneTook)
	}
}

// TestNarrowFilters: filters that name every subject of the stream are
// dropped; any other set is kept as it is.
func TestNarrowFilters(t *testing.T) {
	stream := []string{SubjectObserved + ".>", SubjectZones + ".>"}
	for _, c := range []struct {
		filters []string
		want    int
	}{
		{[]string{SubjectZones + ".>", SubjectObserved + ".>"}, 0},
		{[]string{SubjectObserved + ".>"}, 1},
		{[]string{ObservedFilter("p"), SubjectZones + ".>"}, 2},
	} {
		if got := narrowFilters(c.filters, stream); len(got) != c.want {
			t.Errorf("narrowFilters(%v) = %v, want %d filters", c.filters, got, c.want)
		}
	}
}

// TestReplayIsNotStalledByTombstonesExpiring: tombstones that expire while
// a watch replays its stream (after nats-server listed the last message of
// every subject for its consumer) cost the replay nothing: a restart
// during a long run meets tombstones expiring by the thousand.
func TestReplayIsNotStalledByTombstonesExpiring(t *testing.T) {
	js := startJetStream(t)
	publishSeqs(t, js, "live", 3000, 0) // more than a pull fetches: the tombstones stay on the server
	publishExpiring(t, js, 50)
	last := publishSeqs(t, js, "last", 1, 0)
	got := replayPastExpiry(t, js, 3001)
	if seqs, _ := got.snapshot(); !slices.Contains(seqs, last[0]) {
		t.Fatalf("the last message (%d) was not delivered", last[0])
	}
}

// TestReplayEndingInExpiredTombstonesIsDone: the replay's last messages
// are tombstones that expire after the server sent the message before them
// (its pending count still naming them) and before the reader's next pull.
// No message then says "nothing pending", and a reader that waits for one
// to be done waits for the stream's next message: the collector reading
// back its own sources after a restart, when nothing else publishes there,
// waited forever (a chaos trial, half an hour into the run, held every
// delete until its bound).
func TestReplayEndingInExpiredTombstonesIsDone(t *testing.T) {
	js := startJetStream(t)
	// Exactly one pull's worth (nats.go's 500) of live state, then the
	// tombstones: the first pull ends right before them, and the client
	// asks for more only once the slow reader has taken half of it.
	publishSeqs(t, js, "live", jetstream.DefaultMaxMessages, 0)
	publishExpiring(t, js, 50)
	settled := ReplaysSettled.WithLabelValues(StreamDesired, "done")
	before := testutil.ToFloat64(settled)
	got := replayPastExpiry(t, js, jetstream.DefaultMaxMessages)
	if seqs, _ := got.snapshot(); len(seqs) != jetstream.DefaultMaxMessages {
		t.Fatalf("delivered %d messages, want the %d live ones", len(seqs), jetstream.DefaultMaxMessages)
	}
	if n := testutil.ToFloat64(settled) - before; n != 1 {
		t.Fatalf("zonestream_watch_replays_settled_total{how=done} went up by %v, want 1", n)
	}
}

// publishExpiring publishes n tombstones on ZS_DESIRED that expire in 1 s.
func publishExpiring(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("gone%d.example.org", i)
		msg, err := Message(DesiredSubject(name), &DesiredState{DNSName: name}, "")
		if err != nil {
			t.Fatal(err)
		}
		msg.Header.Set(jetstream.MsgTTLHeader, "1s")
		if _, err := js.PublishMsg(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
}

// replayPastExpiry watches ZS_DESIRED with a slow reader, held at its
// first message until the stream is down to live messages (the
// tombstones expired under the replay), and fails unless the replay is
// done within 15 s of the reader going on. It returns what was delivered.
func replayPastExpiry(t *testing.T, js jetstream.JetStream, live uint64) *sequences {
	t.Helper()
	ctx := t.Context()
	var once sync.Once
	expired := make(chan struct{})
	got := &sequences{}
	caughtUp, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, func(r Received) {
		once.Do(func() { <-expired })
		got.take(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tombstones to expire", func() bool {
		st, err := js.Stream(ctx, StreamDesired)
		return err == nil && st.CachedInfo().State.Msgs == live
	})
	close(expired)
	began := time.Now()
	select {
	case <-caughtUp:
	case <-time.After(15 * time.Second):
		seqs, _ := got.snapshot()
		t.Fatalf("replay not done 15 s after the reader went on: %d of %d live messages delivered", len(seqs), live)
	}
	t.Logf("replay done %s after the reader went on", time.Since(began).Round(time.Millisecond))
	return got
}
