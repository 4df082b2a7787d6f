package cli

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server/sysmem"

	"github.com/zonestream/zonestream/stage/gcpace"
	"github.com/zonestream/zonestream/stage/gcpace/gcpacetest"
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

// TestEmbeddedStoreOnAReadOnlyFilesystem: a writable --data-dir is used;
// one given and not writable is an error naming the flag; the default one
// not writable (a read-only root filesystem) falls back to memory streams
// with a scratch directory in $TMPDIR, else in /dev/shm, else an error
// that says what to do. ("/dev/null/x" cannot be made, even by root.)
func TestEmbeddedStoreOnAReadOnlyFilesystem(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	dir := t.TempDir() + "/state"
	s, err := embeddedStore(dir, false, logger)
	if err != nil || s.dir != dir || s.memory {
		t.Fatalf("writable %s: %+v %v", dir, s, err)
	}
	s.cleanup()
	if _, err := embeddedStore("/dev/null/x", true, logger); err == nil || !strings.Contains(err.Error(), "--data-dir=/dev/null/x") {
		t.Fatalf("a --data-dir given and not writable: %v", err)
	}
	if log.Len() != 0 {
		t.Fatalf("warned without cause: %s", log.String())
	}

	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	s, err = embeddedStore("/dev/null/x", false, logger)
	if err != nil || !s.memory || !strings.HasPrefix(s.dir, scratch) {
		t.Fatalf("the default not writable: %+v %v, want memory streams, scratch under %s", s, err, scratch)
	}
	s.cleanup()
	if !strings.Contains(log.String(), "keeps its streams in memory") {
		t.Errorf("no warning that the streams are in memory: %s", log.String())
	}

	t.Setenv("TMPDIR", "/dev/null/tmp")
	old := shmDir
	shmDir = t.TempDir()
	t.Cleanup(func() { shmDir = old })
	if s, err = embeddedStore("/dev/null/x", false, logger); err != nil || !s.memory || !strings.HasPrefix(s.dir, shmDir) {
		t.Fatalf("no writable $TMPDIR: %+v %v, want a scratch dir in %s", s, err, shmDir)
	}
	s.cleanup()
	shmDir = "/dev/null/shm"
	if _, err := embeddedStore("/dev/null/x", false, logger); err == nil || !strings.Contains(err.Error(), "emptyDir") {
		t.Fatalf("nothing writable: %v, want an error saying what to do", err)
	}
}

// With gcpace pacing collection, the runtime's memory limit is a
// collection goal of a few megabytes at start: the embedded JetStream
// must not take it for GOMEMLIMIT and refuse memory streams by it.
func TestEmbeddedNATSMemoryIsNotTheCollectionGoal(t *testing.T) {
	gcpacetest.Unconfigured(t)
	stop, started := gcpace.Start()
	t.Cleanup(stop)
	if !started {
		t.Fatal("gcpace did not start")
	}
	s, err := StartEmbeddedNATS(t.TempDir(), "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	goal := debug.SetMemoryLimit(-1)
	if got, want := s.JetStreamConfig().MaxMemory, sysmem.Memory()/4*3; got != want || got <= goal {
		t.Fatalf("JetStream's memory %d MiB, want %d MiB (75%% of the machine's), not a share of the collection goal (%d MiB)",
			got>>20, want>>20, goal>>20)
	}
}
