package events

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// blockCacheExpiry is how long nats-server's file store keeps a loaded
// message block cached (defaultCacheBufferExpiration, not settable per
// stream).
const blockCacheExpiry = 10 * time.Second

// BenchmarkStoreOverColdBlock measures what storing a name's new desired
// state costs when its old state sits in a block the server no longer
// caches: a state stream keeps one message per name, so the server loads
// that whole block (8 MB for our streams) to remove the old message. The
// stream holds 100,000 names. ns/op and cold-ms are one publish to a name
// untouched for longer than the cache keeps blocks; warm-ms is the next
// name's publish right after, its block then cached (medians). Run it with
// -benchtime=5x: each op waits out the cache.
func BenchmarkStoreOverColdBlock(b *testing.B) {
	const names = 100000
	js := startJetStream(b)
	publish := func(i int, async bool) {
		name := fmt.Sprintf("n%d.example.org", i)
		msg, err := Message(DesiredSubject(name), desired(name, "192.0.2.1"), "")
		if err != nil {
			b.Fatal(err)
		}
		if async {
			_, err = js.PublishMsgAsync(msg)
		} else {
			_, err = js.PublishMsg(b.Context(), msg)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range names {
		publish(i, true)
		if i%1000 == 999 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	var cold, warm []time.Duration
	b.ResetTimer()
	for r := range b.N {
		b.StopTimer()
		time.Sleep(blockCacheExpiry + time.Second)
		i := r * (names / b.N) % (names - 1)
		b.StartTimer()
		t0 := time.Now()
		publish(i, false)
		cold = append(cold, time.Since(t0))
		b.StopTimer()
		t0 = time.Now()
		publish(i+1, false)
		warm = append(warm, time.Since(t0))
	}
	slices.Sort(cold)
	slices.Sort(warm)
	b.ReportMetric(float64(cold[len(cold)/2].Microseconds())/1000, "cold-ms")
	b.ReportMetric(float64(warm[len(warm)/2].Microseconds())/1000, "warm-ms")
}
