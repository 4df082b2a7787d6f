package events

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events/internal/natstest"
)

// TestPublishSentAgainAtADisconnect: a publish whose request never
// reached the server is sent again as soon as the connection loses it,
// instead of waiting out its timeout, and lands once.
func TestPublishSentAgainAtADisconnect(t *testing.T) {
	relay, _, js, ctx := relayedBus(t)
	subject := DesiredSubject("a.example.com")
	cutOff := testutil.ToFloat64(requestsCutOff)
	relay.Drop()
	// The publish's own deadline is the test's: only the disconnect can
	// make it send its request again.
	errc := make(chan error, 1)
	go func() {
		_, _, err := Publish(ctx, js, subject, desired("a.example.com", "192.0.2.1"), "")
		errc <- err
	}()
	for relay.Dropped() == 0 {
		select {
		case err := <-errc:
			t.Fatalf("the publish ended before its request was sent: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	relay.Cut()
	relay.Open()
	if err := <-errc; err != nil {
		t.Fatalf("a publish cut off by a disconnect: %v", err)
	}
	if got := testutil.ToFloat64(requestsCutOff) - cutOff; got != 1 {
		t.Errorf("publishes counted as cut off: %v, want 1", got)
	}
	st, err := js.Stream(ctx, StreamDesired)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("the stream holds %d messages, want the one published", n)
	}
}

// TestPublishDuringAnOutageWaitsForTheReconnect: what is published while
// the connection is down waits in nats.go's buffer for the server it
// reconnects to; the failed attempts to reconnect in between cut nothing
// off.
func TestPublishDuringAnOutageWaitsForTheReconnect(t *testing.T) {
	relay, nc, js, ctx := relayedBus(t)
	subject := DesiredSubject("a.example.com")
	attempts := nc.StatusChanged(nats.RECONNECTING)
	defer nc.RemoveStatusListener(attempts)
	relay.Cut()
	<-attempts
	cutOff := testutil.ToFloat64(requestsCutOff)
	errc := make(chan error, 1)
	go func() {
		_, _, err := Publish(ctx, js, subject, desired("a.example.com", "192.0.2.1"), "")
		errc <- err
	}()
	// nats.go says RECONNECTING again at each attempt the relay turns away.
	for range 3 {
		select {
		case <-attempts:
		case err := <-errc:
			t.Fatalf("the publish ended while the connection was down: %v", err)
		case <-ctx.Done():
			t.Fatal("no attempt to reconnect")
		}
	}
	relay.Open()
	if err := <-errc; err != nil {
		t.Fatalf("a publish made while the connection was down: %v", err)
	}
	if got := testutil.ToFloat64(requestsCutOff) - cutOff; got != 0 {
		t.Errorf("publishes counted as cut off: %v, want none", got)
	}
}

// relayedBus is a JetStream server with its streams, a client connected
// through a relay that quickly reconnects, and the test's context (30 s).
func relayedBus(t *testing.T) (*natstest.Relay, *nats.Conn, jetstream.JetStream, context.Context) {
	t.Helper()
	relay := natstest.StartRelay(t, natstest.Start(t, nil))
	nc, js := natstest.Connect(t, relay.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	return relay, nc, js, ctx
}
