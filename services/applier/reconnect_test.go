package applier_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// restartableNATS starts a NATS server with streams whose restart keeps
// its store and address, as a killed and restarted server does, and
// returns a client that reconnects to it.
func restartableNATS(t *testing.T) (js jetstream.JetStream, restart func()) {
	t.Helper()
	dir := t.TempDir()
	port, err := loopback.Port(false)
	if err != nil {
		t.Fatal(err)
	}
	withPort := func(o *server.Options) { o.Port = port }
	s, err := natsenv.Start(dir, withPort)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown() })
	_, js = natsenv.Connect(t, s.ClientURL())
	if err := events.EnsureStreams(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return js, func() {
		s.Shutdown()
		s.WaitForShutdown()
		if s, err = natsenv.Start(dir, withPort); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAckedButLostIsPublishedAgain: a NATS server killed right after it
// acknowledged a message may come back without it. After the reconnect the
// applier's next listing compares with what the stream holds, not with
// what it believes it published, and publishes the lost state again;
// otherwise the planner would never learn that the record exists.
func TestAckedButLostIsPublishedAgain(t *testing.T) {
	js, restart := restartableNATS(t)
	observed := observedAPI(t, js)

	// The loss: the message is gone from the stream, and the server
	// restarts (the client reconnects to the same address).
	st, err := js.Stream(context.Background(), events.StreamObserved)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), jetstream.WithPurgeSubject(observed)); err != nil {
		t.Fatal(err)
	}
	restart()
	waitFor(t, "api published again after the reconnect", func() bool {
		return lastMsg(t, js, events.StreamObserved, observed) != nil
	})
}

// TestReconnectReadsNothingBackWhenNothingWasLost: after a server restart
// that lost nothing, the applier finds its newest acknowledged message in
// the stream and reads nothing back, however many deletes' tombstones the
// stream holds (a read-back goes through every one of them: seconds, late
// in a long run).
func TestReconnectReadsNothingBackWhenNothingWasLost(t *testing.T) {
	js, restart := restartableNATS(t)
	const deleted = 20000
	for i := range deleted {
		name := fmt.Sprintf("gone-%d.%s", i, zone)
		if _, err := js.PublishMsgAsync(mustMessage(t, events.ObservedSubject("inmemory", name),
			&events.ObservedState{Provider: "inmemory", Zone: zone, DNSName: name})); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			<-js.PublishAsyncComplete() // a loaded machine stalls the client's 4000 in flight
		}
	}
	<-js.PublishAsyncComplete()
	observedAPI(t, js)

	count := func(result string) float64 {
		return testutil.ToFloat64(events.LastAckChecks.WithLabelValues(events.StreamObserved, result))
	}
	kept, other := count("kept"), count("lost")+count("unknown")+count("error")
	restart()
	waitFor(t, "the applier's check after the reconnect", func() bool { return count("kept") > kept })
	if n := count("lost") + count("unknown") + count("error"); n != other {
		t.Fatalf("%v checks after the reconnect read back or failed", n-other)
	}
}

func mustMessage(t *testing.T, subject string, ev events.Event) *nats.Msg {
	t.Helper()
	msg, err := events.Message(subject, ev, "")
	if err != nil {
		t.Fatal(err)
	}
	return msg
}
