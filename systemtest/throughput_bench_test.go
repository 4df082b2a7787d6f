package systemtest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// BenchmarkThroughput is the cost table's pipeline throughput: endpoint events
// per second through the pipeline's stages on the all-in-one's embedded
// JetStream, beside the floor of that JetStream alone.
//
// What runs: the all-in-one's own code (cli.AllInOne.Run: embedded NATS,
// dedup, planner, applier with the inmemory provider, in this process)
// without the collector and the portal. The benchmark stands in for the
// collector: it publishes N events.SourceState (the collector's message,
// built by events.Message; one object of one A endpoint each, as a
// Service is, so N source events are N endpoints and N names),
// asynchronously, as fast as the bus takes them. It does not measure
// reading objects from Kubernetes: BenchmarkScale does, end to end.
//
//   - events/s: N / the time from the first publish until the applier has
//     published observed state holding the A record of every one of the N
//     names (read on a plain NATS subscription): source events through
//     dedup, planner and applier, ownership TXT included.
//   - publish-floor-msg/s: afterwards, on the same server, N messages of
//     the same size and headers published the same way into a stream
//     configured as the sources stream, with no consumer, until the last
//     is acknowledged: what the pipeline's first hop alone costs.
//
// N is $ZS_THROUGHPUT_EVENTS (default 100000).
func BenchmarkThroughput(b *testing.B) {
	n, err := strconv.Atoi(cmp.Or(os.Getenv("ZS_THROUGHPUT_EVENTS"), "100000"))
	if err != nil || n <= 0 {
		b.Fatalf("ZS_THROUGHPUT_EVENTS: %q is not a number of events", os.Getenv("ZS_THROUGHPUT_EVENTS"))
	}
	for range b.N {
		benchThroughput(b, n)
	}
}

const throughputZone = "throughput.test"

func benchThroughput(b *testing.B, n int) {
	b.StopTimer()
	url := startPipelineInProcess(b)
	js := asyncPublisher(b, url)
	msgs := make([]*nats.Msg, n)
	for i := range n {
		obj := events.ObjectRef{Cluster: "bench", Source: "service", Namespace: "default", Name: "svc-" + strconv.Itoa(i)}
		ep := events.NewEndpoint(obj.Name+"."+throughputZone, events.RecordTypeA, 300, burstIP(i%60000))
		msg, err := events.Message(obj.Subject(), &events.SourceState{Object: obj, Endpoints: []events.Endpoint{ep}}, "")
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = msg
	}
	observed := watchObserved(b, url, n)

	b.StartTimer()
	start := time.Now()
	publishAll(b, js, msgs)
	published := time.Since(start)
	select {
	case <-observed:
	case <-time.After(10 * time.Minute):
		b.Fatalf("the applier has not observed all %d names in 10 minutes", n)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	b.ReportMetric(published.Seconds(), "publish-s")
	b.ReportMetric(publishFloor(b, js, msgs), "publish-floor-msg/s")
}

// startPipelineInProcess runs the all-in-one's dedup, planner and applier
// (inmemory provider) on its embedded NATS until the benchmark ends, and
// returns the NATS URL once every stage is ready.
func startPipelineInProcess(b *testing.B) string {
	ops := loopback.Addr(b)
	a := cli.NewAllInOne()
	if _, err := a.Parse([]string{"--provider=inmemory", "--inmemory-zone=" + throughputZone, "--domain-filter=" + throughputZone,
		"--txt-owner-id=bench", "--nats-listen=127.0.0.1:0", "--data-dir=" + b.TempDir(), "--metrics-address=" + ops,
		"--log-level=warn"}); err != nil {
		b.Fatal(err)
	}
	a.WithoutStages("collector", "portal")
	logger, err := a.Logger()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls, stopped := make(chan string, 1), make(chan error, 1)
	go func() { stopped <- a.Run(ctx, true, logger, func(url string) { urls <- url }) }()
	b.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			b.Errorf("pipeline: %v", err)
		}
	})
	var url string
	select {
	case url = <-urls:
	case err := <-stopped:
		b.Fatalf("pipeline: %v", err)
	case <-time.After(time.Minute):
		b.Fatal("pipeline did not start in a minute")
	}
	waitUntil(b, "pipeline ready", time.Minute, func() error { return ready(ops) })
	return url
}

// watchObserved returns a channel closed once the applier has published
// observed state holding an A record for n distinct names.
func watchObserved(b *testing.B, url string, n int) <-chan struct{} {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	var mu sync.Mutex
	seen := map[string]bool{}
	all := make(chan struct{})
	sub, err := nc.Subscribe(events.SubjectObserved+".>", func(m *nats.Msg) {
		var obs events.ObservedState
		if err := events.Unmarshal(m.Header, m.Data, &obs); err != nil {
			b.Errorf("undecodable observed state: %v", err)
			return
		}
		if !slices.ContainsFunc(obs.Records, func(e events.Endpoint) bool { return e.RecordType == events.RecordTypeA }) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[obs.DNSName] {
			seen[obs.DNSName] = true
			if len(seen) == n {
				close(all)
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	// Every observed state counts: none may be dropped as a slow consumer.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		b.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	return all
}

// asyncPublisher connects to url for asynchronous publishes, a bounded
// window of them in flight, until the benchmark ends.
func asyncPublisher(b *testing.B, url string) jetstream.JetStream {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		b.Fatal(err)
	}
	return js
}

// publishAll publishes msgs asynchronously, a bounded window at a time,
// and waits until every one is acknowledged.
func publishAll(b *testing.B, js jetstream.JetStream, msgs []*nats.Msg) {
	for _, m := range msgs {
		if _, err := js.PublishMsgAsync(m, jetstream.WithStallWait(time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	awaitPublishes(b, js)
}

// awaitPublishes waits until every asynchronous publish on js is
// acknowledged (10 minutes at most).
func awaitPublishes(b *testing.B, js jetstream.JetStream) {
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(10 * time.Minute):
		b.Fatal("publishes not acknowledged in 10 minutes")
	}
}

// publishFloor is how many messages per second the server takes into a
// stream configured as the sources stream, without consumers: msgs' size
// and headers, a fresh message id each (the server checks them for
// duplicates as it does the collector's), each on its own subject.
func publishFloor(b *testing.B, js jetstream.JetStream, msgs []*nats.Msg) float64 {
	ctx := context.Background()
	sources, err := js.Stream(ctx, events.StreamSources)
	if err != nil {
		b.Fatal(err)
	}
	cfg := sources.CachedInfo().Config
	cfg.Name, cfg.Subjects = "BENCH_FLOOR", []string{"bench.floor.>"}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	floor := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		h := nats.Header{}
		for k, v := range m.Header {
			h[k] = slices.Clone(v)
		}
		h.Set(nats.MsgIdHdr, nuid.Next())
		floor[i] = &nats.Msg{Subject: fmt.Sprintf("bench.floor.%d", i), Header: h, Data: m.Data}
	}
	start := time.Now()
	publishAll(b, js, floor)
	return float64(len(floor)) / time.Since(start).Seconds()
}
