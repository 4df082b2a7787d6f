package events

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDecodeTakesIdentityFromTheSubject: a payload claiming another object
// (or name) than its subject is rejected, not believed.
func TestDecodeTakesIdentityFromTheSubject(t *testing.T) {
	real := ObjectRef{Cluster: "dev", Source: "service", Namespace: "ns", Name: "web"}
	forged := &SourceState{Object: ObjectRef{Cluster: "prod", Source: "crd", Namespace: "ns", Name: "web"},
		Endpoints: []Endpoint{NewEndpoint("www.example.org", "A", 0, "192.0.2.1")}}
	msg, err := Message(real.Subject(), forged, "")
	if err != nil {
		t.Fatal(err)
	}
	var got SourceState
	err = Decode(Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data}, &got)
	if !errors.Is(err, ErrWrongSubject) {
		t.Fatalf("forged identity decoded: err=%v", err)
	}
	honest, _ := Message(forged.Object.Subject(), forged, "")
	if err := Decode(Received{Subject: honest.Subject, Header: honest.Header, Data: honest.Data}, &got); err != nil {
		t.Fatalf("honest message rejected: %v", err)
	}
	var d DesiredState
	err = Decode(Received{Subject: DesiredSubject("www.example.org"), Header: honest.Header, Data: []byte{0xc1}}, &d)
	if !errors.Is(err, ErrUndecodable) {
		t.Fatalf("garbage: err=%v, want ErrUndecodable", err)
	}
}

// TestTombstoneReplacesHistoryAndExpires: a tombstone leaves nothing of the
// subject's past states for a replay to resurrect, and expires.
func TestTombstoneReplacesHistoryAndExpires(t *testing.T) {
	js := startJetStream(t)
	ctx := context.Background()
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		st := &SourceState{Object: ref, Endpoints: []Endpoint{NewEndpoint("www.example.org", "A", 0, ip)}}
		if _, _, err := Publish(ctx, js, ref.Subject(), st, ""); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := Message(ref.Subject(), &SourceState{Object: ref}, "")
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get(jetstream.MsgTTLHeader) != TombstoneTTL.String() {
		t.Fatalf("tombstone carries no TTL: %v", msg.Header)
	}
	msg.Header.Set(jetstream.MsgTTLHeader, "1s") // the real TTL is a day
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	st, _ := js.Stream(ctx, StreamSources)
	info, _ := st.Info(ctx, jetstream.WithSubjectFilter(ref.Subject()))
	if n := info.State.Subjects[ref.Subject()]; n != 1 {
		t.Fatalf("%d messages on the subject after its tombstone, want 1 (history rolled up)", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ = st.Info(ctx, jetstream.WithSubjectFilter(ref.Subject()))
		if info.State.Subjects[ref.Subject()] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tombstone did not expire")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEnsureStreamsKeepsOperatorLimits: a restart does not undo what an
// operator set on a stream.
func TestEnsureStreamsKeepsOperatorLimits(t *testing.T) {
	js := startJetStream(t)
	ctx := context.Background()
	st, _ := js.Stream(ctx, StreamResults)
	cfg := st.CachedInfo().Config
	cfg.MaxAge, cfg.MaxBytes = time.Hour, 64<<20
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	st, _ = js.Stream(ctx, StreamResults)
	if got := st.CachedInfo().Config; got.MaxAge != time.Hour || got.MaxBytes != 64<<20 {
		t.Fatalf("operator limits reset: MaxAge %s MaxBytes %d", got.MaxAge, got.MaxBytes)
	}
}

// TestWatchTellsHistoryFromNews: what was on the stream before Watch is
// not live; what comes after is.
func TestWatchTellsHistoryFromNews(t *testing.T) {
	js := startJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mark := &DesiredComplete{Complete: true}
	if _, _, err := Publish(ctx, js, DesiredCompleteSubject(), mark, ""); err != nil {
		t.Fatal(err)
	}
	got := make(chan Received, 2)
	caughtUp, err := Watch(ctx, js, StreamDesired, []string{SubjectDesired + ".>"}, func(r Received) { got <- r })
	if err != nil {
		t.Fatal(err)
	}
	<-caughtUp
	if r := <-got; r.Live {
		t.Fatal("a mark from before the watch was taken for live")
	}
	if _, _, err := Publish(ctx, js, DesiredCompleteSubject(), mark, ""); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !r.Live {
		t.Fatal("a mark published while watching was taken for history")
	}
}

// FuzzDecode: whatever bytes arrive on a subject, Decode either rejects
// them with ErrUndecodable or ErrWrongSubject, or returns an event that
// belongs on that subject; it never panics and never accepts a payload
// for another identity.
func FuzzDecode(f *testing.F) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	good, _ := Message(ref.Subject(), &SourceState{Object: ref, Endpoints: []Endpoint{NewEndpoint("www.example.org", "A", 0, "192.0.2.1")}}, "")
	f.Add(good.Data)
	f.Add([]byte("not msgpack"))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		var st SourceState
		err := Decode(Received{Subject: ref.Subject(), Header: good.Header, Data: data}, &st)
		switch {
		case err == nil && st.Object != ref:
			t.Fatalf("accepted %+v on %s", st.Object, ref.Subject())
		case err != nil && !errors.Is(err, ErrUndecodable) && !errors.Is(err, ErrWrongSubject):
			t.Fatalf("error of no known kind: %v", err)
		}
	})
}

// TestDecodeCostsNoMoreThanThePayload: a small payload whose headers claim
// millions of elements, or nests without end, is rejected before msgpack
// preallocates for it. Found by FuzzDecode: a few hundred such bytes made
// a reader allocate gigabytes.
func TestDecodeCostsNoMoreThanThePayload(t *testing.T) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	good, err := Message(ref.Subject(), &SourceState{Object: ref}, "")
	if err != nil {
		t.Fatal(err)
	}
	huge := []byte("\x82\xa6object\x84\xa7cluster\xa1c\xa6source\xa7service\xa9namespace\xa2ns\xa4name\xa3web\xa9endpoints")
	for range 8 {
		huge = append(huge, "\xdd\xff\xff\xff\xff\x8f\xa7targets"...) // 4 Gi endpoints, 4 Gi targets
	}
	deep := bytes.Repeat([]byte{0x91}, 100_000)
	for name, data := range map[string][]byte{"huge counts": huge, "deep nesting": deep} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var st SourceState
			err := Decode(Received{Subject: ref.Subject(), Header: good.Header, Data: data}, &st)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("got %v, want ErrUndecodable", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("decoding %d bytes allocated %d bytes", len(data), alloc)
			}
			if _, err := ToJSON(data); err == nil {
				t.Error("ToJSON accepted it")
			}
		})
	}
}
