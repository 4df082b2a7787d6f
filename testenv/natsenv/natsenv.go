// Package natsenv runs an embedded JetStream server on loopback.
package natsenv

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Option adjusts the server's options.
type Option func(*server.Options)

// WithMaxPayload sets the largest message the server takes (default 1 MiB),
// so that a test can reach the limit without megabytes of data.
func WithMaxPayload(bytes int32) Option {
	return func(o *server.Options) { o.MaxPayload = bytes }
}

// Start runs a JetStream server on a free loopback port, storing under dir.
func Start(dir string, options ...Option) (*server.Server, error) {
	opts := &server.Options{
		ServerName: "zonestream-test",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	}
	for _, o := range options {
		o(opts)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("nats server not ready after 10s")
	}
	return s, nil
}

// StartT starts a JetStream server for the test and stops it afterwards.
func StartT(t testing.TB, options ...Option) *server.Server {
	t.Helper()
	dir := t.TempDir()
	s, err := Start(dir, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// Connect returns a JetStream client for the test, closed afterwards.
func Connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.Name(t.Name()))
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
