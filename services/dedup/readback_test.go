package dedup

import (
	"context"
	"log/slog"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestReadBackTakesATombstoneAsNothing: what dedup reads back at a start
// or after a reconnect holds the names it published live, not the deleted
// ones: a tombstone and an empty subject mean the same, and a day of
// deletes would otherwise make every name deleted in it work to redo.
func TestReadBackTakesATombstoneAsNothing(t *testing.T) {
	srv := natsenv.StartT(t)
	_, js := natsenv.Connect(t, srv.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	live, gone := "www.example.org", "gone.example.org"
	ep := events.NewEndpoint(live, "A", 0, "192.0.2.1")
	for _, d := range []*events.DesiredState{
		{DNSName: live, Endpoints: []events.Endpoint{ep}},
		{DNSName: gone, Endpoints: []events.Endpoint{events.NewEndpoint(gone, "A", 0, "192.0.2.2")}},
		{DNSName: gone},
	} {
		if _, _, err := events.Publish(ctx, js, events.DesiredSubject(d.DNSName), d, ""); err != nil {
			t.Fatal(err)
		}
	}
	p, err := readBack(ctx, js, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.hashes[events.DesiredSubject(live)]; !ok || len(p.hashes) != 1 {
		t.Fatalf("read back %v, want only %s", p.hashes, live)
	}
}
