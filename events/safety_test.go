package events

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events/internal/natstest"
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
	retired, err := Message(CollectorSubject("c", "service"), &CollectorState{CollectorRef: CollectorRef{Cluster: "c", Collector: "service"}, Phase: PhaseRetired}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := retired.Header.Get(jetstream.MsgTTLHeader); got != MarkTombstoneTTL.String() {
		t.Fatalf("a retired mark lives %q, want %s: a restarted dedup reads retirements back", got, MarkTombstoneTTL)
	}
	if r := msg.Header.Get(jetstream.MsgRollup); r != "" {
		t.Fatalf("tombstone asks for a rollup (%s): no stream several identities write allows one", r)
	}
	msg.Header.Set(jetstream.MsgTTLHeader, "1s") // the real one is minutes
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	st, _ := js.Stream(ctx, StreamSources)
	info, _ := st.Info(ctx, jetstream.WithSubjectFilter(ref.Subject()))
	if n := info.State.Subjects[ref.Subject()]; n != 1 {
		t.Fatalf("%d messages on the subject after its tombstone, want 1 (the tombstone replaced the last state)", n)
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

// TestEnsureStreamsTurnsRollupsOff: streams and a lease bucket made by
// an earlier version (rollups on, eight states per subject, DiscardOld,
// no bound) are brought to one state per subject, DiscardNew, a bound and
// no rollups, keeping the limit an operator set; after that a rollup
// published on one's own subject is refused and purges nothing.
func TestEnsureStreamsTurnsRollupsOff(t *testing.T) {
	_, js := natstest.Connect(t, natstest.Start(t, nil))
	ctx := context.Background()
	for _, want := range Streams() {
		old := want
		old.MaxBytes, old.MaxMsgs, old.Discard = -1, -1, jetstream.DiscardOld
		if old.MaxMsgsPerSubject > 0 {
			old.MaxMsgsPerSubject, old.AllowRollup = 8, true
		}
		if old.Name == StreamSources {
			old.MaxBytes = 64 << 20 // an operator's
		}
		if _, err := js.CreateStream(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BucketLeases, History: 1, TTL: leaseBucketTTL}); err != nil {
		t.Fatal(err)
	}
	a := ObjectRef{Cluster: "a", Source: "service", Namespace: "ns", Name: "web"}
	b := ObjectRef{Cluster: "b", Source: "service", Namespace: "ns", Name: "web"}
	for _, ref := range []ObjectRef{a, a, b} {
		st := &SourceState{Object: ref, Endpoints: []Endpoint{NewEndpoint("www.example.org", "A", 0, "192.0.2.1")}}
		if _, _, err := Publish(ctx, js, ref.Subject(), st, ""); err != nil {
			t.Fatal(err)
		}
	}

	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	for _, want := range append(Streams(), jetstream.StreamConfig{Name: LeaseStream, MaxMsgsPerSubject: 1}) {
		st, err := js.Stream(ctx, want.Name)
		if err != nil {
			t.Fatal(err)
		}
		got := st.CachedInfo().Config
		if got.AllowRollup {
			t.Errorf("%s still allows rollups", want.Name)
		}
		if got.MaxBytes <= 0 || got.MaxMsgs <= 0 && want.Name != LeaseStream {
			t.Errorf("%s unbounded: MaxBytes %d MaxMsgs %d", want.Name, got.MaxBytes, got.MaxMsgs)
		}
		if want.MaxMsgsPerSubject > 0 && (got.MaxMsgsPerSubject != want.MaxMsgsPerSubject || got.Discard != jetstream.DiscardNew) {
			t.Errorf("%s keeps %d per subject, discard %s: want %d, DiscardNew", want.Name, got.MaxMsgsPerSubject, got.Discard, want.MaxMsgsPerSubject)
		}
	}
	sources, _ := js.Stream(ctx, StreamSources)
	if got := sources.CachedInfo().Config.MaxBytes; got != 64<<20 {
		t.Errorf("the operator's MaxBytes on %s became %d", StreamSources, got)
	}
	if n := sources.CachedInfo().State.Msgs; n != 2 {
		t.Errorf("%s holds %d messages, want the last state of a and of b", StreamSources, n)
	}

	msg, err := Message(a.Subject(), &SourceState{Object: a, Endpoints: []Endpoint{NewEndpoint("www.example.org", "A", 0, "192.0.2.9")}}, "")
	if err != nil {
		t.Fatal(err)
	}
	msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
	if _, err := js.PublishMsg(ctx, msg); err == nil {
		t.Error("a rollup was accepted")
	}
	if _, err := sources.GetLastMsgForSubject(ctx, b.Subject()); err != nil {
		t.Errorf("b's object is gone: %v", err)
	}
}

// TestFullStateStreamRefusesNewKeysAndKeepsLiveState: a state stream at its
// bound refuses a new key with ErrStreamFull, counted, and keeps every
// state it holds; a new state of a key it holds still replaces the old.
func TestFullStateStreamRefusesNewKeysAndKeepsLiveState(t *testing.T) {
	js := startJetStream(t)
	ctx := context.Background()
	st, _ := js.Stream(ctx, StreamDesired)
	cfg := st.CachedInfo().Config
	cfg.MaxMsgs = 3
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	names := []string{"a.example.org", "b.example.org", "c.example.org"}
	for _, n := range names {
		if _, _, err := Publish(ctx, js, DesiredSubject(n), desired(n, "192.0.2.1"), ""); err != nil {
			t.Fatal(err)
		}
	}
	before := testutil.ToFloat64(StreamFullRefusals.WithLabelValues(StreamDesired))
	_, _, err := Publish(ctx, js, DesiredSubject("d.example.org"), desired("d.example.org", "192.0.2.1"), "")
	if !errors.Is(err, ErrStreamFull) {
		t.Fatalf("a fourth key: %v, want ErrStreamFull", err)
	}
	if got := testutil.ToFloat64(StreamFullRefusals.WithLabelValues(StreamDesired)); got != before+1 {
		t.Errorf("zonestream_stream_full_total{stream=%q} went from %v to %v", StreamDesired, before, got)
	}
	if _, _, err := Publish(ctx, js, DesiredSubject(names[0]), desired(names[0], "192.0.2.2"), ""); err != nil {
		t.Fatalf("a new state of a held key refused: %v", err)
	}
	for _, n := range names {
		if _, err := st.GetLastMsgForSubject(ctx, DesiredSubject(n)); err != nil {
			t.Errorf("%s lost: %v", n, err)
		}
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
	f.Add(sourceWith(300, []byte{0xc0}))
	f.Add(oneEndpointWith(300, []byte{0xa0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st SourceState
		var err error
		if alloc := allocated(func() {
			err = Decode(Received{Subject: ref.Subject(), Header: good.Header, Data: data}, &st)
		}); alloc > decodeCostBound(len(data)) {
			t.Fatalf("decoding %d bytes allocated %d", len(data), alloc)
		}
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
