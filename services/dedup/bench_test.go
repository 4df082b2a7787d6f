package dedup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

const benchNames = 100_000

func benchName(i int) string { return fmt.Sprintf("svc-%d.bench.test", i) }

func benchObject(i int) events.ObjectRef {
	return events.ObjectRef{Cluster: "c1", Source: "service", Namespace: "ns", Name: fmt.Sprint("svc-", i)}
}

// benchRun is a caught-up dedup holding n names, each wanted by one
// object, whose desired state is already published: nothing to do.
func benchRun(b *testing.B, js jetstream.JetStream, n int) *run {
	b.Helper()
	d, err := New(Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	r := d.newRun(js)
	r.published = &published{hashes: map[string]string{}, holders: map[string][]events.RRsetHolder{}}
	for i := range n {
		name := benchName(i)
		feedSource(b, r, benchObject(i), events.NewEndpoint(name, "A", 0, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)))
		ds, enc, err := r.desired(name)
		if err != nil {
			b.Fatal(err)
		}
		r.remember(ds, enc.Hash())
		delete(r.dirty, name)
	}
	r.Dedup.caughtUp.Store(true)
	return r
}

// feedSource hands dedup a source event the way the bus does: encoded.
func feedSource(b *testing.B, r *run, ref events.ObjectRef, eps ...events.Endpoint) {
	msg, err := events.Message(ref.Subject(), &events.SourceState{Object: ref, Endpoints: eps}, "")
	if err != nil {
		b.Fatal(err)
	}
	r.fold(context.Background(), events.Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data})
}

// BenchmarkMergeOneChange: one object changes among 100k names in place;
// the time to take it in, recompute its name and publish the desired state
// to JetStream.
func BenchmarkMergeOneChange(b *testing.B) {
	srv := natsenv.StartT(b)
	_, js := natsenv.Connect(b, srv.ClientURL())
	if err := events.EnsureStreams(context.Background(), js); err != nil {
		b.Fatal(err)
	}
	r := benchRun(b, js, benchNames)
	b.ResetTimer()
	for i := range b.N {
		n := i % benchNames
		feedSource(b, r, benchObject(n), events.NewEndpoint(benchName(n), "A", 0, fmt.Sprint("192.0.2.", i%250+1)))
		if len(r.dirty) != 1 {
			b.Fatalf("%d names to recompute after one object changed, want 1", len(r.dirty))
		}
		if err := r.flush(context.Background(), false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryPerName reports dedup's heap per name held: the objects'
// endpoints, the name index, and the hash and owners last published.
func BenchmarkMemoryPerName(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := benchRun(b, nil, benchNames)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchNames, "heap-bytes/name")
		runtime.KeepAlive(r)
	}
}
