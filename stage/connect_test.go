package stage

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// The all-in-one's stages reach its embedded JetStream in process: a
// server that listens on no socket at all is reached, and its streams made.
func TestConnectInProcess(t *testing.T) {
	s := natsenv.StartT(t, func(o *server.Options) { o.DontListen = true })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	nc, js, err := Connect(ctx, s.ClientURL(), "test", Credentials{}, logger, InProcess(s), WithStreams(events.WithReplicas(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if addr := nc.ConnectedAddr(); addr != "pipe" {
		t.Errorf("connected to %q, want the in-process pipe", addr)
	}
	for _, want := range events.Streams() {
		if _, err := js.Stream(ctx, want.Name); err != nil {
			t.Errorf("stream %s: %v", want.Name, err)
		}
	}
}
