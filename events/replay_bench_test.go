package events

import (
	"fmt"
	"testing"
)

// BenchmarkReplayPastTombstones measures what a restarted stage pays to
// replay a state stream holding 1000 live keys and the tombstones of keys
// deleted within the tombstones' lifetime (TombstoneTTL). A fresh replay
// needs no tombstone, its state being empty, yet a last-per-subject
// replay delivers each one: the cost grows with history that is no longer
// live (issue 27: 161,433 messages for 1,224 live objects took dedup
// 17.6 s after a NATS restart in a chaos run). ns/op is one replay.
func BenchmarkReplayPastTombstones(b *testing.B) {
	const live = 1000
	for _, gone := range []int{0, 20000, 100000} {
		b.Run(fmt.Sprintf("live=%d/tombstones=%d", live, gone), func(b *testing.B) {
			js := startJetStream(b)
			publish := func(i int, wanted bool) {
				obj := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: fmt.Sprintf("o%d", i)}
				st := &SourceState{Object: obj}
				if wanted {
					name := fmt.Sprintf("o%d.example.org", i)
					st.Endpoints = []Endpoint{NewEndpoint(name, "A", 0, "192.0.2.1")}
				}
				msg, err := Message(SourceSubject(obj.Cluster, obj.Source, obj.Namespace, obj.Name), st, "")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := js.PublishMsgAsync(msg); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 999 {
					<-js.PublishAsyncComplete()
				}
			}
			for i := range gone {
				publish(live+i, true)
				publish(live+i, false) // its tombstone replaces it
			}
			for i := range live {
				publish(i, true)
			}
			<-js.PublishAsyncComplete()
			b.ResetTimer()
			var n int
			for range b.N {
				n = 0
				if err := ReadLast(b.Context(), js, StreamSources, []string{SubjectSources + ".>"}, func(Received) { n++ }); err != nil {
					b.Fatal(err)
				}
			}
			if n != live+gone {
				b.Fatalf("the replay delivered %d messages, want %d live states and %d tombstones", n, live, gone)
			}
			b.ReportMetric(float64(n), "msgs/replay")
		})
	}
}
