package systemtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
)

// BenchmarkIdleFloor is the floor under the cost table's idle goal: the
// all-in-one's embedded JetStream (cli.StartEmbeddedNATS) holding the
// pipeline's streams and lease bucket, with no client connected and
// nothing else running, measured like BenchmarkIdle (CPU-seconds of the
// process per minute at rest). nats-server's file store keeps a 100 ms
// access-time ticker and a 1 s process-stats ticker running whatever the
// load; no stage can go below what this reports.
func BenchmarkIdleFloor(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s, err := cli.StartEmbeddedNATS(b.TempDir(), "127.0.0.1:0", false)
		if err != nil {
			b.Fatal(err)
		}
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			b.Fatal(err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		if err := events.EnsureStreams(context.Background(), js); err != nil {
			b.Fatal(err)
		}
		nc.Close()
		time.Sleep(15 * time.Second) // the creations' own timers run out
		b.StartTimer()
		before := cpuSeconds(b, os.Getpid())
		time.Sleep(2 * time.Minute)
		b.ReportMetric((cpuSeconds(b, os.Getpid())-before)/2, "idle-cpu-s/min")
		b.StopTimer()
		s.Shutdown()
	}
}
