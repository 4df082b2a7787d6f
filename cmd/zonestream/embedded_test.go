package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestEmbeddedNATSStaysOnLoopback: the embedded NATS, which has no users,
// listens beyond loopback only when the operator says so, and then the
// start warns.
func TestEmbeddedNATSStaysOnLoopback(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	for _, ok := range []string{"127.0.0.1:4222", "[::1]:4222", "localhost:0", "127.0.0.2:4222"} {
		if err := checkEmbeddedListen(ok, false, logger); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, open := range []string{":4222", "0.0.0.0:4222", "[::]:4222", "192.0.2.1:4222", "nats.example.org:4222"} {
		err := checkEmbeddedListen(open, false, logger)
		if err == nil || !strings.Contains(err.Error(), "--nats-listen-beyond-loopback") {
			t.Errorf("%s: %v, want a refusal that names the flag", open, err)
		}
	}
	if log.Len() != 0 {
		t.Fatalf("warned without cause: %s", log.String())
	}
	if err := checkEmbeddedListen("0.0.0.0:4222", true, logger); err != nil {
		t.Fatalf("refused although allowed: %v", err)
	}
	if !strings.Contains(log.String(), "level=WARN") {
		t.Fatalf("no warning for an open embedded NATS: %q", log.String())
	}
}
