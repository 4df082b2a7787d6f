package main

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// checkEmbeddedListen refuses a non-loopback --nats-listen unless the
// operator allowed it explicitly, and then warns. The embedded NATS has no
// users and no permissions: anyone who reaches it can queue a plan that
// the applier writes to DNS with its TSIG key, or purge the streams. A
// refusal at start costs a flag; an open bus costs a zone.
func checkEmbeddedListen(listen string, beyondLoopback bool, logger *slog.Logger) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--nats-listen=%q: %w", listen, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	if !beyondLoopback {
		return fmt.Errorf("--nats-listen=%q is not a loopback address: the embedded NATS has no authentication, "+
			"so anyone who reaches it could write your DNS. Use a NATS server with generated credentials "+
			"(zonestream nats-config, --nats-url), or pass --nats-listen-beyond-loopback if you really mean it", listen)
	}
	logger.Warn("the embedded NATS listens beyond loopback without authentication: whoever reaches it can write your DNS",
		"nats_listen", listen)
	return nil
}

// startEmbeddedNATS runs a JetStream server inside the process, storing
// under dataDir and listening on listen, so that the NATS CLI can watch a
// laptop install too.
func startEmbeddedNATS(dataDir, listen string) (*server.Server, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen=%q: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen=%q: bad port", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{
		ServerName: "zonestream",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(dataDir, "jetstream"),
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start on %s (is the port in use? see --nats-listen)", listen)
	}
	return s, nil
}
