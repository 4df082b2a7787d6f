package events

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/zonestream/zonestream/events/internal/natstest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startJetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	_, js := natstest.Connect(t, natstest.Start(t, nil))
	if err := EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a second start of any service must not fail.
	if err := EnsureStreams(context.Background(), js); err != nil {
		t.Fatalf("EnsureStreams is not idempotent: %v", err)
	}
	return js
}

func desired(name string, ip string) *DesiredState {
	return &DesiredState{DNSName: name, Endpoints: []Endpoint{NewEndpoint(name, "A", 0, ip)}}
}

func TestWatchReplaysLastPerSubjectThenFollows(t *testing.T) {
	js := startJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		if _, _, err := Publish(ctx, js, DesiredSubject("a.example.com"), desired("a.example.com", ip), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Publish(ctx, js, DesiredSubject("b.example.com"), desired("b.example.com", "192.0.2.9"), ""); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	seen := map[string]string{}
	count := 0
	caughtUp, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, func(r Received) {
		var d DesiredState
		if err := Unmarshal(r.Header, r.Data, &d); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		seen[d.DNSName] = d.Endpoints[0].Targets[0]
		count++
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-caughtUp:
	case <-ctx.Done():
		t.Fatal("never caught up")
	}
	mu.Lock()
	if count != 2 || seen["a.example.com"] != "192.0.2.3" || seen["b.example.com"] != "192.0.2.9" {
		t.Fatalf("replay delivered %d messages %v, want only the last state of each name", count, seen)
	}
	mu.Unlock()

	if _, _, err := Publish(ctx, js, DesiredSubject("c.example.com"), desired("c.example.com", "192.0.2.7"), ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := seen["c.example.com"]
		mu.Unlock()
		if got == "192.0.2.7" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("live message not followed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchEmptyStreamIsCaughtUpAtOnce(t *testing.T) {
	js := startJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	caughtUp, err := Watch(ctx, js, StreamObserved, []string{SubjectObserved + ".>"}, func(Received) {})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-caughtUp:
	case <-ctx.Done():
		t.Fatal("an empty stream must count as caught up")
	}
}

func TestLastHashes(t *testing.T) {
	js := startJetStream(t)
	ctx := context.Background()
	var last string
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		h, _, err := Publish(ctx, js, DesiredSubject("a.example.com"), desired("a.example.com", ip), "")
		if err != nil {
			t.Fatal(err)
		}
		last = h
	}
	hashes, err := LastHashes(ctx, js, StreamDesired, SubjectDesired+".>")
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 1 || hashes[DesiredSubject("a.example.com")] != last {
		t.Fatalf("LastHashes = %v, want the hash of the last message %s", hashes, last)
	}
	// A deleted key reads back as an empty one: absent.
	if _, _, err := Publish(ctx, js, DesiredSubject("a.example.com"), &DesiredState{DNSName: "a.example.com"}, ""); err != nil {
		t.Fatal(err)
	}
	if hashes, err = LastHashes(ctx, js, StreamDesired, SubjectDesired+".>"); err != nil || len(hashes) != 0 {
		t.Fatalf("LastHashes after a tombstone = %v, %v; want nothing", hashes, err)
	}
}

// TestWatchReadsAgainWhenTheStreamWentBack: a server that restarts after
// losing messages it had acknowledged hands their sequences out again; a
// watch resuming after the highest sequence it saw would skip the new
// messages. Here publishers have filled the lost sequences again before
// the watch is back, so the stream's last sequence is past what it saw:
// only the message at that sequence tells. After the reconnect it reads
// every subject's last message again.
func TestWatchReadsAgainWhenTheStreamWentBack(t *testing.T) {
	url := natstest.Start(t, nil)
	relay := natstest.StartRelay(t, url)
	_, admin := natstest.Connect(t, url)
	_, js := natstest.Connect(t, relay.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := EnsureStreams(ctx, admin); err != nil {
		t.Fatal(err)
	}
	publish := func(name, ip string) {
		t.Helper()
		ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: name}
		st := &SourceState{Object: ref, Endpoints: []Endpoint{NewEndpoint(name+".example.org", "A", 0, ip)}}
		if _, _, err := Publish(ctx, admin, ref.Subject(), st, ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		publish(fmt.Sprint("old", i), "192.0.2.1")
	}
	var mu sync.Mutex
	got := map[string]bool{}
	caughtUp, err := Watch(ctx, js, StreamSources, []string{SubjectSources + ".>"}, func(r Received) {
		mu.Lock()
		got[r.Subject] = true
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	<-caughtUp
	// The loss, as the server sees it after such a restart: the stream
	// starts over, its sequences are handed out again, and more of them
	// than the watch saw before it is back.
	relay.Cut()
	if err := admin.DeleteStream(ctx, StreamSources); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, admin); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 7 {
		publish(fmt.Sprint("new", i), "192.0.2.9")
		want = append(want, SourceSubject("c", "service", "ns", fmt.Sprint("new", i)))
	}
	relay.Open()
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		missing := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return got[s] })
		mu.Unlock()
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch never saw %v, published after the stream went back", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHoldsSeesAPurgeOfOneSubject: what a stage published is held until
// the stream, or that subject, is purged; other subjects don't count.
func TestHoldsSeesAPurgeOfOneSubject(t *testing.T) {
	js := startJetStream(t)
	ctx := t.Context()
	a, b := DesiredSubject("a.example.com"), DesiredSubject("b.example.com")
	for _, n := range []string{"a.example.com", "b.example.com"} {
		if _, _, err := Publish(ctx, js, DesiredSubject(n), desired(n, "192.0.2.1"), ""); err != nil {
			t.Fatal(err)
		}
	}
	holds := func(subject string) bool {
		t.Helper()
		held, err := Holds(ctx, js, StreamDesired, subject)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	if !holds(a) || !holds(b) || holds(DesiredSubject("c.example.com")) {
		t.Fatal("before the purge: want a and b held, c not")
	}
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(a)); err != nil {
		t.Fatal(err)
	}
	if holds(a) || !holds(b) {
		t.Fatal("after purging a: want a gone, b held")
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if holds(b) {
		t.Fatal("after purging the stream: b still held")
	}
	if _, err := Holds(ctx, js, "ZS_NO_SUCH_STREAM", b); err == nil {
		t.Fatal("a stream that does not exist: want an error, not an answer")
	}
}

// TestKeptHeaderValuesStandAlone: nats.go decodes a message's header
// values as parts of one string of the whole block; the values a service
// keeps per subject or per name (hash, event id, causation) must not keep
// the block alive with them.
func TestKeptHeaderValuesStandAlone(t *testing.T) {
	block := "NATS/1.0\r\n" + HeaderHash + ": 0123456789abcdef\r\n" + HeaderEventID + ": ev1\r\n" + HeaderCausation + ": ev0\r\n\r\n"
	h, err := nats.DecodeHeadersMsg([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	r := Received{Header: h}
	for key, kept := range map[string]string{HeaderHash: r.Hash(), HeaderEventID: r.EventID(), HeaderCausation: r.Causation()} {
		if kept != h.Get(key) {
			t.Fatalf("%s: got %q, want %q", key, kept, h.Get(key))
		}
		if unsafe.StringData(kept) == unsafe.StringData(h.Get(key)) {
			t.Errorf("%s: the value kept shares the header block's memory", key)
		}
	}
}

// TestDeadLetterDropsTheServersHeaders: an undecodable tombstone is
// dead-lettered though the dead-letter stream takes no per-message TTL
// and no rollup, and the copy carries neither.
func TestDeadLetterDropsTheServersHeaders(t *testing.T) {
	js := startJetStream(t)
	ctx := context.Background()
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	msg, err := Message(ref.Subject(), &SourceState{Object: ref}, "")
	if err != nil {
		t.Fatal(err)
	}
	msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
	r := Received{Subject: msg.Subject, Header: msg.Header, Data: []byte{0xc1}}
	if err := DeadLetter(ctx, js, "dedup", r, ErrUndecodable); err != nil {
		t.Fatalf("dead-lettering a tombstone: %v", err)
	}
	st, _ := js.Stream(ctx, StreamDeadLetter)
	got, err := st.GetLastMsgForSubject(ctx, DeadLetterSubject("dedup"))
	if err != nil {
		t.Fatal(err)
	}
	for k := range got.Header {
		if strings.HasPrefix(k, "Nats-") {
			t.Errorf("the dead letter carries %s", k)
		}
	}
	if got.Header.Get(HeaderOriginalSubject) != ref.Subject() {
		t.Errorf("original subject %q", got.Header.Get(HeaderOriginalSubject))
	}
}
