package collectortest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// One kube-apiserver and one JetStream server for the whole test package,
// set by Main.
var (
	Cluster *kube.Cluster
	JS      jetstream.JetStream
)

// Main starts the package's kube-apiserver (with the CRDs of crdDirs) and
// JetStream server, runs the tests and stops both; TestMain passes its
// result to os.Exit.
func Main(m *testing.M, crdDirs ...string) int {
	code, err := run(m, crdDirs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func run(m *testing.M, crdDirs []string) (int, error) {
	var err error
	if Cluster, err = kube.Start(context.Background(), crdDirs...); err != nil {
		return 0, err
	}
	defer Cluster.Stop()
	dir, err := os.MkdirTemp("", "zs-collector-nats-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	srv, err := natsenv.Start(dir)
	if err != nil {
		return 0, err
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	if err := published.start(nc); err != nil {
		return 0, err
	}
	if JS, err = jetstream.New(nc); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, JS, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		return 0, err
	}
	return m.Run(), nil
}
