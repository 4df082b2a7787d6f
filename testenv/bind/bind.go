// Package bind runs Debian's BIND 9 (named) as a process on loopback, with a
// TSIG key allowed to update and transfer a set of test zones: the real
// RFC 2136 server zonestream's rfc2136 provider is tested against.
package bind

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
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
	DefaultNamed     = "/usr/sbin/named"
	DefaultKeyName   = "zonestream-key."
	DefaultAlgorithm = "hmac-sha256"
	DefaultZone      = "example.org"
)

// Options configure a BIND server.
type Options struct {
	// Zones are the primary zones named serves (default: example.org).
	Zones []string
	// Named is the path of the named binary (default /usr/sbin/named).
	Named string
	// KeyName is the TSIG key's name (default "zonestream-key.").
	KeyName string
	// Algorithm is the TSIG key's algorithm (default hmac-sha256): one of
	// hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384,
	// hmac-sha512. Update cannot sign with hmac-md5.
	Algorithm string
	// StartTimeout bounds how long Start waits for named to answer
	// (default 30s, also bounded by ctx).
	StartTimeout time.Duration
	// TLS, when set, adds a DNS over TLS listener (tls.go).
	TLS *TLS
	// GSSAPI, when set, makes the zones take GSS-TSIG updates (gssapi.go).
	GSSAPI *GSSAPI
}

// Server is a running named.
type Server struct {
	Host      string // "127.0.0.1"
	Port      int
	Addr      string // "127.0.0.1:port"
	Zones     []string
	KeyName   string // fully qualified, e.g. "zonestream-key."
	Secret    string // base64
	Algorithm string // "hmac-sha256"
	// TLSPort and TLSAddr are the DNS over TLS listener's, when
	// Options.TLS is set.
	TLSPort int
	TLSAddr string

	dir  string
	opts Options
	proc *daemon.Process
}

// Start writes a configuration with the zones and the TSIG key into a
// temporary directory and runs named on a free loopback port until Stop.
// It returns once named answers the SOA of every zone.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Named == "" {
		opts.Named = DefaultNamed
	}
	if opts.KeyName == "" {
		opts.KeyName = DefaultKeyName
	}
	if len(opts.Zones) == 0 {
		opts.Zones = []string{DefaultZone}
	}
	if opts.Algorithm == "" {
		opts.Algorithm = DefaultAlgorithm
	}
	if !strings.HasPrefix(opts.Algorithm, "hmac-") {
		return nil, fmt.Errorf("bind: unknown TSIG algorithm %q", opts.Algorithm)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if _, err := os.Stat(opts.Named); err != nil {
		return nil, fmt.Errorf("bind: named not found: %w", err)
	}
	zones, err := daemon.Zones("bind", opts.Zones)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	return daemon.Retry(ctx, "bind", func() (*Server, error) {
		s := &Server{
			Host:      "127.0.0.1",
			Zones:     append([]string(nil), zones...),
			KeyName:   dns.Fqdn(opts.KeyName),
			Secret:    base64.StdEncoding.EncodeToString(secret),
			Algorithm: opts.Algorithm,
		}
		if err := s.start(ctx, opts); err != nil {
			return nil, err
		}
		return s, nil
	})
}

func (s *Server) start(ctx context.Context, opts Options) (err error) {
	port, err := loopback.Port(true)
	if err != nil {
		return err
	}
	s.Port = port
	s.Addr = net.JoinHostPort(s.Host, strconv.Itoa(port))
	s.opts = opts
	if opts.TLS != nil {
		if s.TLSPort, err = loopback.Port(false); err != nil {
			return err
		}
		s.TLSAddr = net.JoinHostPort(s.Host, strconv.Itoa(s.TLSPort))
	}
	if s.dir, err = os.MkdirTemp("", "zonestream-bind-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := s.writeConfig(); err != nil {
		return err
	}
	return s.run(ctx)
}

// run starts named on the configuration in s.dir and waits until it
// answers.
func (s *Server) run(ctx context.Context) error {
	cmd := exec.Command(s.opts.Named, "-g", "-c", filepath.Join(s.dir, "named.conf"))
	cmd.Dir = s.dir
	if env := s.gssEnv(); env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var err error
	if s.proc, err = daemon.Start("named", cmd); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return s.waitReady(ctx, s.opts.StartTimeout)
}

// Halt stops named but keeps its configuration and zones (the updates
// are in the zones' journals): the server is down until Restart.
func (s *Server) Halt() error { return s.proc.Stop() }

// Restart starts a halted named again on the same port with the same
// zones and waits until it answers them.
func (s *Server) Restart(ctx context.Context) error {
	if err := daemon.Restartable(s.proc, s.dir); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return s.run(ctx)
}

// waitReady polls the SOA of every zone until each is answered.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	portTaken := func() error { return daemon.PortTaken(s.proc, "address in use", "interface ignored") }
	if err := daemon.WaitZones(ctx, s.proc, s.Addr, s.Zones, time.Now().Add(timeout), portTaken); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}

func (s *Server) writeConfig() error {
	var b strings.Builder
	q := func(p string) string { return strconv.Quote(p) }
	fmt.Fprintf(&b, `options {
	directory %s;
	pid-file %s;
	lock-file %s;
	session-keyfile %s;
	managed-keys-directory %s;
	dump-file %s;
	statistics-file %s;
	listen-on port %d { 127.0.0.1; };
%s	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
	notify no;
	// Tests run many appliers against one server, each listing zones by
	// AXFR; BIND's default of 10 concurrent transfers answers SERVFAIL past it.
	transfers-out 200;
	allow-query { any; };
	allow-transfer { none; };
%s};

controls { };

logging {
	channel stderr_log { stderr; severity info; print-time yes; print-category yes; };
	category default { stderr_log; };
	category lame-servers { null; };
};

key %s {
	algorithm %s;
	secret %s;
};
`, q(s.dir), q(filepath.Join(s.dir, "named.pid")), q(filepath.Join(s.dir, "named.lock")),
		q(filepath.Join(s.dir, "session.key")), q(s.dir), q(filepath.Join(s.dir, "named_dump.db")),
		q(filepath.Join(s.dir, "named.stats")), s.Port, s.tlsListen(), s.gssOption(), q(s.KeyName), s.Algorithm, q(s.Secret))
	b.WriteString(s.tlsBlock())
	for _, z := range s.Zones {
		file := filepath.Join(s.dir, z+".zone")
		fmt.Fprintf(&b, `
zone %s {
	type primary;
	file %s;
	journal %s;
%s};
`, q(z), q(file), q(file+".jnl"), s.zoneAccess())
		zone := fmt.Sprintf(`$TTL 300
@	IN SOA	ns.%[1]s. hostmaster.%[1]s. 1 3600 600 86400 300
@	IN NS	ns.%[1]s.
ns	IN A	127.0.0.1
`, z)
		if err := os.WriteFile(file, []byte(zone), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(s.dir, "named.conf"), []byte(b.String()), 0o644)
}

// Stop stops named and removes its directory.
func (s *Server) Stop() error { return daemon.StopAndRemove(s.proc, &s.dir) }

// Log returns the last part of named's output.
func (s *Server) Log() string {
	return s.proc.Output()
}

// StartT starts named for the test with the given zones (default
// example.org) and stops it afterwards.
func StartT(t testing.TB, zones ...string) *Server {
	return daemon.StartT(t, "named", func(ctx context.Context) (*Server, error) { return Start(ctx, Options{Zones: zones}) })
}

// TsigSecret is the secret map a dns.Client needs to sign with the key.
func (s *Server) TsigSecret() map[string]string { return map[string]string{s.KeyName: s.Secret} }

// Query asks the server for name/qtype (see daemon.Query).
func (s *Server) Query(name string, qtype uint16) ([]dns.RR, error) {
	return daemon.Query(s.Addr, name, qtype)
}

// Update sends one TSIG-signed RFC 2136 UPDATE to zone over TCP, removing
// the given RRs (by value) and inserting the others: for tests that plant
// records zonestream does not own.
func (s *Server) Update(zone string, insert []dns.RR, remove []dns.RR) error {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	if len(remove) > 0 {
		m.Remove(remove)
	}
	if len(insert) > 0 {
		m.Insert(insert)
	}
	if s.Algorithm == "hmac-md5" {
		return errors.New("bind: Update cannot sign with hmac-md5 (miekg/dns dropped it)")
	}
	// miekg/dns names a TSIG algorithm by its absolute name (hmac-sha256.).
	m.SetTsig(s.KeyName, dns.Fqdn(s.Algorithm), 300, time.Now().Unix())
	// A fresh client per signed message: miekg/dns cannot sign a second
	// message on the same connection.
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: s.TsigSecret()}
	r, _, err := c.Exchange(m, s.Addr)
	if err != nil {
		return fmt.Errorf("update %s: %w", zone, err)
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("update %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	return nil
}
