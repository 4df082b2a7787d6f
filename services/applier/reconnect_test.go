package applier_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestAckedButLostIsPublishedAgain: a NATS server killed right after it
// acknowledged a message may come back without it. After the reconnect the
// applier's next listing compares with what the stream holds, not with
// what it believes it published, and publishes the lost state again;
// otherwise the planner would never learn that the record exists.
func TestAckedButLostIsPublishedAgain(t *testing.T) {
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
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	observed := observedAPI(t, js)

	// The loss: the message is gone from the stream, and the server
	// restarts (the client reconnects to the same address).
	st, err := js.Stream(ctx, events.StreamObserved)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(observed)); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	if s, err = natsenv.Start(dir, withPort); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "api published again after the reconnect", func() bool {
		return lastMsg(t, js, events.StreamObserved, observed) != nil
	})
}
