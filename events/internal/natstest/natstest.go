// Package natstest runs a nats-server in the test's process, on loopback,
// for the tests of the events module (testenv/natsenv serves the others;
// the contract module does not depend on the harness).
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Start runs a server with opts (nil: JetStream, nothing else) on a free
// loopback port until the test ends, and returns its URL.
func Start(t testing.TB, opts *server.Options) string {
	t.Helper()
	if opts == nil {
		opts = &server.Options{JetStream: true}
	}
	if opts.JetStream && opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	s := Run(t, opts)
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// Run starts a server with opts as they are, quiet, and returns it once it
// takes connections: for a test that stops and starts it again.
func Run(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return s
}

// Connect connects to url until the test ends, with extra options.
func Connect(t testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
