package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// Streams runs `zonestream streams ensure`: it creates the pipeline's
// streams, or adds to them what the pipeline needs, with the operator's
// credentials. Services do the same at start, but under the generated
// permissions they may not create or change a stream: they only check
// that the streams are as required.
func Streams(args []string) error {
	if len(args) > 0 && args[0] != "ensure" && strings.HasPrefix(args[0], "-") {
		args = append([]string{"ensure"}, args...) // streams --help: streams ensure's
	}
	if len(args) == 0 || args[0] != "ensure" {
		return stage.NewUsageError("zonestream streams: usage: zonestream streams ensure [--nats-stream-replicas N]")
	}
	cmd := newOperatorCommand("streams ensure", "zonestream streams ensure [--nats-stream-replicas N]")
	cmd.nargs = 0
	replicas := cmd.fs.Int("nats-stream-replicas", 1, "replicas of each JetStream stream (3 on a clustered NATS)")
	if _, ok, err := cmd.parse(args[1:]); !ok {
		return err
	}
	nc, js, err := cmd.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := events.EnsureStreams(ctx, js, events.WithReplicas(*replicas)); err != nil {
		return err
	}
	for _, s := range events.Streams() {
		fmt.Fprintf(os.Stdout, "stream %s: ready\n", s.Name)
	}
	fmt.Fprintf(os.Stdout, "bucket %s (leader leases): ready\n", events.BucketLeases)
	return nil
}
