package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats-server/v2/server/sysmem"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage/gcpace"
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

// StartEmbeddedNATS runs a JetStream server inside the process, storing
// under dataDir and listening on listen, so that the NATS CLI can watch a
// laptop install too. memory: the streams are in memory (embeddedStore),
// and the server's memory limit must take what they reserve.
func StartEmbeddedNATS(dataDir, listen string, memory bool) (*server.Server, error) {
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
	} else {
		// A port in use is said at once: the server would only fail to
		// become ready, after the wait below.
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return nil, fmt.Errorf("embedded NATS cannot listen on --nats-listen=%s: %w (another NATS or zonestream runs there? "+
				"pick another port, port 0 for any free one, or --nats-url for a NATS server)", listen, err)
		}
		ln.Close()
	}
	opts := &server.Options{
		ServerName: "zonestream",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(dataDir, "jetstream"),
		NoSigs:     true,
		NoLog:      true,
	}
	opts.JetStreamMaxMemory = jetStreamMemory(memory)
	s, err := server.NewServer(opts)
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

// store is where the embedded NATS keeps its streams.
type store struct {
	dir string
	// memory: the streams are in memory, dir holds nothing of them (the
	// server wants a writable directory all the same).
	memory  bool
	cleanup func()
}

// shmDir is a tmpfs a container has even with a read-only root
// filesystem; a variable for the tests.
var shmDir = "/dev/shm"

// embeddedStore picks where the embedded NATS stores its streams: dataDir
// when it is writable. A --data-dir that was given and is not writable is
// an error. The default one may not be, in a container with a read-only
// root filesystem and no volume (ExternalDNS' Helm chart runs its pod so,
// and ExternalDNS keeps nothing between runs): the streams are then kept
// in memory, lost at restart, and rebuilt from Kubernetes and the DNS
// server as on a first start; the server is given a scratch directory in
// the temporary directory or, when that is read-only too, /dev/shm.
func embeddedStore(dataDir string, given bool, logger *slog.Logger) (store, error) {
	err := writable(dataDir)
	if err == nil {
		return store{dir: dataDir, cleanup: func() {}}, nil
	}
	if given {
		return store{}, fmt.Errorf("--data-dir=%s: %w: the embedded NATS stores its streams there", dataDir, err)
	}
	var errs []error
	for _, base := range []string{os.TempDir(), shmDir} {
		dir, terr := os.MkdirTemp(base, "zonestream-")
		if terr != nil {
			errs = append(errs, terr)
			continue
		}
		logger.Warn("the default --data-dir is not writable (a read-only root filesystem?): the embedded NATS keeps its streams in memory, "+
			"lost at restart and rebuilt from Kubernetes and DNS; give --data-dir a writable volume to keep them",
			"data_dir", dataDir, "error", err.Error(), "scratch_dir", dir)
		return store{dir: dir, memory: true, cleanup: func() { os.RemoveAll(dir) }}, nil
	}
	return store{}, fmt.Errorf("the default --data-dir %s: %w, and no temporary directory is writable either (%w): "+
		"give --data-dir a writable directory (e.g. an emptyDir volume)", dataDir, err, errors.Join(errs...))
}

// writable makes dir if need be and checks a file can be made in it.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-test-")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// jetStreamMemory is the embedded server's memory budget; 0 leaves it to
// nats-server (75% of the machine's memory, or of GOMEMLIMIT). Without
// GOGC and GOMEMLIMIT the runtime's memory limit is gcpace's collection
// goal, not a budget, which nats-server would take for GOMEMLIMIT: it then
// gets the machine's share itself.
func jetStreamMemory(memory bool) int64 {
	switch {
	case memory:
		return memoryReservation()
	case gcpace.Configured():
		return 0
	default:
		return sysmem.Memory() / 4 * 3
	}
}

// memoryReservation is what the streams reserve in memory storage: the sum
// of their bounds (MaxBytes), and room for the lease bucket. A stream
// reserves its bound when created, though it holds what is published;
// nats-server's default limit, 75% of the machine's memory or of
// $GOMEMLIMIT, refused the streams under GOMEMLIMIT=512MiB and would on a
// small node.
func memoryReservation() int64 {
	var n int64 = 64 << 20
	for _, c := range events.Streams() {
		n += c.MaxBytes
	}
	return n
}
