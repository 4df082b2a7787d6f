// Package pdns runs Debian's PowerDNS Authoritative Server (pdns_server,
// with the gsqlite3 backend) as a process on loopback, with its HTTP API
// enabled and a set of Native test zones created through that API: the real
// server zonestream's pdns provider is tested against.
//
// Everything lives in a temporary directory: the configuration (read with
// --config-dir), the SQLite database, the control socket. The server listens
// for DNS and for HTTP on free loopback ports only, never on 53 or 8081.
package pdns

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/internal/daemon"
	"github.com/zonestream/zonestream/testenv/loopback"

	"github.com/miekg/dns"
)

// Defaults of Options.
const (
	DefaultPDNSServer = "/usr/sbin/pdns_server"
	DefaultSQLite3    = "sqlite3"
	DefaultZone       = "example.org"
	// ServerID is the server id of the API: /api/v1/servers/localhost.
	ServerID = "localhost"
)

// schemaPaths are where Debian's pdns-backend-sqlite3 puts the schema.
var schemaPaths = []string{
	"/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql",
	"/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql",
	"/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql.gz",
}

// Options configure a PowerDNS server.
type Options struct {
	// Zones are the Native zones created through the API (default:
	// example.org). Each gets an SOA, an NS ns.<zone> and ns.<zone> A
	// 127.0.0.1.
	Zones []string
	// PDNSServer is the path of the pdns_server binary (default
	// /usr/sbin/pdns_server).
	PDNSServer string
	// SQLite3 is the sqlite3 command that creates the database (default:
	// sqlite3 from $PATH).
	SQLite3 string
	// Schema is the gsqlite3 schema file, plain or gzipped (default: found
	// where Debian's pdns-backend-sqlite3 installs it).
	Schema string
	// StartTimeout bounds how long Start waits for the API and for DNS
	// answers (default 30s, also bounded by ctx).
	StartTimeout time.Duration
}

// Server is a running pdns_server.
type Server struct {
	Host    string // "127.0.0.1"
	DNSPort int
	DNSAddr string // "127.0.0.1:port"
	APIPort int
	APIURL  string // "http://127.0.0.1:port"
	APIKey  string
	Zones   []string
	// Version is the server's version as its API reports it (e.g. "4.7.3").
	Version string

	dir  string
	opts Options
	proc *daemon.Process
	http *http.Client
}

// Start writes a configuration and an empty database into a temporary
// directory, runs pdns_server on free loopback ports until Stop, creates the
// zones through the API and returns once DNS answers the SOA of every zone.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.PDNSServer == "" {
		opts.PDNSServer = DefaultPDNSServer
	}
	if opts.SQLite3 == "" {
		opts.SQLite3 = DefaultSQLite3
	}
	if len(opts.Zones) == 0 {
		opts.Zones = []string{DefaultZone}
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if _, err := os.Stat(opts.PDNSServer); err != nil {
		return nil, fmt.Errorf("pdns: pdns_server not found (apt-get install pdns-server pdns-backend-sqlite3): %w", err)
	}
	sqlite, err := exec.LookPath(opts.SQLite3)
	if err != nil {
		return nil, fmt.Errorf("pdns: sqlite3 not found (apt-get install sqlite3): %w", err)
	}
	opts.SQLite3 = sqlite
	if opts.Schema == "" {
		for _, p := range schemaPaths {
			if _, err := os.Stat(p); err == nil {
				opts.Schema = p
				break
			}
		}
		if opts.Schema == "" {
			return nil, errors.New("pdns: gsqlite3 schema not found (apt-get install pdns-backend-sqlite3)")
		}
	}
	zones, err := daemon.Zones("pdns", opts.Zones)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return daemon.Retry(ctx, "pdns", func() (*Server, error) {
		s := &Server{
			Host:   "127.0.0.1",
			Zones:  append([]string(nil), zones...),
			APIKey: hex.EncodeToString(key),
			http:   &http.Client{Timeout: 10 * time.Second},
		}
		if err := s.start(ctx, opts); err != nil {
			return nil, err
		}
		return s, nil
	})
}

func (s *Server) start(ctx context.Context, opts Options) (err error) {
	if s.DNSPort, err = loopback.Port(true); err != nil {
		return err
	}
	if s.APIPort == 0 { // kept when started again: loopback never hands it out twice
		if s.APIPort, err = loopback.Port(false); err != nil {
			return err
		}
	}
	s.DNSAddr = net.JoinHostPort(s.Host, strconv.Itoa(s.DNSPort))
	s.APIURL = "http://" + net.JoinHostPort(s.Host, strconv.Itoa(s.APIPort))
	if s.dir, err = os.MkdirTemp("", "zonestream-pdns-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := s.createDatabase(ctx, opts); err != nil {
		return err
	}
	if err := s.writeConfig(); err != nil {
		return err
	}
	s.opts = opts
	deadline := time.Now().Add(opts.StartTimeout)
	if err := s.run(ctx, deadline); err != nil {
		return err
	}
	for _, z := range s.Zones {
		if err := s.createZone(ctx, z); err != nil {
			return err
		}
	}
	return s.waitDNS(ctx, deadline)
}

// run starts pdns_server on the configuration in s.dir and waits until
// its API answers.
func (s *Server) run(ctx context.Context, deadline time.Time) error {
	cmd := exec.Command(s.opts.PDNSServer, "--config-dir="+s.dir)
	cmd.Dir = s.dir
	var err error
	if s.proc, err = daemon.Start("pdns_server", cmd); err != nil {
		return fmt.Errorf("pdns: %w", err)
	}
	return s.waitAPI(ctx, deadline)
}

// Halt stops pdns_server but keeps its configuration and database: DNS
// and the API are down until Restart.
func (s *Server) Halt() error { return s.proc.Stop() }

// Restart starts a halted pdns_server again on the same ports with the
// same database and waits until its API and every zone answer.
func (s *Server) Restart(ctx context.Context) error {
	if err := daemon.Restartable(s.proc, s.dir); err != nil {
		return fmt.Errorf("pdns: %w", err)
	}
	deadline := time.Now().Add(s.opts.StartTimeout)
	if err := s.run(ctx, deadline); err != nil {
		return err
	}
	return s.waitDNS(ctx, deadline)
}

func (s *Server) createDatabase(ctx context.Context, opts Options) error {
	raw, err := os.ReadFile(opts.Schema)
	if err != nil {
		return fmt.Errorf("pdns: read schema: %w", err)
	}
	if strings.HasSuffix(opts.Schema, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("pdns: schema %s: %w", opts.Schema, err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("pdns: schema %s: %w", opts.Schema, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, opts.SQLite3, filepath.Join(s.dir, "pdns.sqlite3"))
	cmd.Stdin = bytes.NewReader(raw)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pdns: create database: %v: %s", err, out)
	}
	return nil
}

func (s *Server) writeConfig() error {
	conf := fmt.Sprintf(`# zonestream test PowerDNS: loopback only, everything in this directory.
launch=gsqlite3
gsqlite3-database=%[1]s/pdns.sqlite3
gsqlite3-pragma-synchronous=0
local-address=127.0.0.1
local-port=%[2]d
api=yes
api-key=%[3]s
webserver=yes
webserver-address=127.0.0.1
webserver-port=%[4]d
webserver-allow-from=127.0.0.0/8
webserver-loglevel=none
socket-dir=%[1]s
guardian=no
daemon=no
disable-syslog=yes
log-timestamp=no
loglevel=4
write-pid=no
primary=no
secondary=no
# no security poll: it would ask a public resolver
security-poll-suffix=
# no caches: a test sees every change at once
cache-ttl=0
query-cache-ttl=0
negquery-cache-ttl=0
zone-cache-refresh-interval=0
receiver-threads=1
distributor-threads=1
reuseport=no
`, s.dir, s.DNSPort, s.APIKey, s.APIPort)
	return os.WriteFile(filepath.Join(s.dir, "pdns.conf"), []byte(conf), 0o600)
}

// portTaken says whether pdns_server could not bind its ports.
func (s *Server) portTaken() error {
	return daemon.PortTaken(s.proc, "already in use", "Address in use")
}

// exitErr reports why the process ended before it was ready.
func (s *Server) exitErr() error {
	if err := s.portTaken(); err != nil {
		return fmt.Errorf("pdns: %w", err)
	}
	return fmt.Errorf("pdns: %w", s.proc.ExitError())
}

// waitAPI polls GET /api/v1/servers/localhost until it answers.
func (s *Server) waitAPI(ctx context.Context, deadline time.Time) error {
	for {
		select {
		case <-s.proc.Exited():
			return s.exitErr()
		default:
		}
		if err := s.portTaken(); err != nil {
			return fmt.Errorf("pdns: %w", err)
		}
		var info struct {
			Version string `json:"version"`
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.api(rctx, http.MethodGet, "", nil, &info)
		cancel()
		if err == nil {
			s.Version = info.Version
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pdns: API not answering: %v:\n%s", err, daemon.LastLines(s.proc.Output(), 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		case <-s.proc.Exited():
		}
	}
}

// waitDNS polls the SOA of every zone until each is answered.
func (s *Server) waitDNS(ctx context.Context, deadline time.Time) error {
	if err := daemon.WaitZones(ctx, s.proc, s.DNSAddr, s.Zones, deadline, s.portTaken); err != nil {
		return fmt.Errorf("pdns: %w", err)
	}
	return nil
}

// Stop stops pdns_server and removes its directory.
func (s *Server) Stop() error { return daemon.StopAndRemove(s.proc, &s.dir) }

// Log returns the last part of pdns_server's output.
func (s *Server) Log() string {
	return s.proc.Output()
}

// StartT starts pdns_server for the test with the given zones (default
// example.org) and stops it afterwards.
func StartT(t testing.TB, zones ...string) *Server {
	return daemon.StartT(t, "pdns_server", func(ctx context.Context) (*Server, error) { return Start(ctx, Options{Zones: zones}) })
}

// Query asks the server for name/qtype (see daemon.Query).
func (s *Server) Query(name string, qtype uint16) ([]dns.RR, error) {
	return daemon.Query(s.DNSAddr, name, qtype)
}
