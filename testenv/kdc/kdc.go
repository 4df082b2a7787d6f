// Package kdc runs Debian's MIT Kerberos KDC (krb5kdc) as a process on
// loopback, with a realm of the test's own: the real Kerberos that
// GSS-TSIG (RFC 3645, Windows DNS / Active Directory) needs. Principals
// are added with kadmin.local, service keys written to keytabs for the
// DNS server (testenv/bind's GSSAPI).
package kdc

import (
	"context"
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
)

// Defaults of Options; the binaries are Debian's krb5-kdc and
// krb5-admin-server packages' (hack/deps.sh installs them).
const (
	DefaultRealm = "ZONESTREAM.TEST"
	DefaultSbin  = "/usr/sbin"
)

// Options configure a KDC.
type Options struct {
	// Realm is the Kerberos realm (default ZONESTREAM.TEST).
	Realm string
	// Sbin is where krb5kdc, kdb5_util and kadmin.local are (default
	// /usr/sbin).
	Sbin string
	// StartTimeout bounds how long Start waits for the KDC to listen
	// (default 30s, also bounded by ctx).
	StartTimeout time.Duration
}

// Server is a running KDC.
type Server struct {
	Realm string
	Addr  string // "127.0.0.1:port", TCP and UDP
	// Krb5Conf is a krb5.conf naming this KDC for the realm (its default
	// realm): a client's $KRB5_CONFIG.
	Krb5Conf string

	dir  string
	opts Options
	proc *daemon.Process
}

// Installed says why the KDC cannot run here, or nil.
func Installed(sbin string) error {
	if sbin == "" {
		sbin = DefaultSbin
	}
	for _, b := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		if _, err := os.Stat(filepath.Join(sbin, b)); err != nil {
			return fmt.Errorf("kdc: %s not found (Debian's krb5-kdc and krb5-admin-server; hack/deps.sh installs them): %w", b, err)
		}
	}
	return nil
}

// Start creates the realm's database in a temporary directory and runs
// krb5kdc on a free loopback port until Stop. It returns once the KDC
// accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Realm == "" {
		opts.Realm = DefaultRealm
	}
	opts.Realm = strings.ToUpper(opts.Realm)
	if opts.Sbin == "" {
		opts.Sbin = DefaultSbin
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if err := Installed(opts.Sbin); err != nil {
		return nil, err
	}
	return daemon.Retry(ctx, "kdc", func() (*Server, error) {
		s := &Server{Realm: opts.Realm, opts: opts}
		if err := s.start(ctx); err != nil {
			return nil, err
		}
		return s, nil
	})
}

func (s *Server) start(ctx context.Context) (err error) {
	port, err := loopback.Port(true)
	if err != nil {
		return err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if s.dir, err = os.MkdirTemp("", "zonestream-kdc-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := s.writeConfig(port); err != nil {
		return err
	}
	// The database, its master key stashed so krb5kdc starts unattended.
	if err := s.admin("kdb5_util", "create", "-s", "-r", s.Realm, "-P", "zonestream-master-"+strconv.Itoa(port)); err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(s.opts.Sbin, "krb5kdc"), "-n", "-r", s.Realm)
	cmd.Dir, cmd.Env = s.dir, s.env()
	if s.proc, err = daemon.Start("krb5kdc", cmd); err != nil {
		return fmt.Errorf("kdc: %w", err)
	}
	return s.waitReady(ctx)
}

// writeConfig writes the KDC's profile (kdc.conf: the database, the port,
// its log to stderr) and the clients' krb5.conf. Clients use TCP
// (udp_preference_limit 1): a ticket with its authorization data may not
// fit a datagram, and TCP tells a KDC down at once.
func (s *Server) writeConfig(port int) error {
	kdcConf := fmt.Sprintf(`[kdcdefaults]
	kdc_ports = %[2]d
	kdc_tcp_ports = %[2]d
[realms]
	%[1]s = {
		kdc_listen = 127.0.0.1:%[2]d
		kdc_tcp_listen = 127.0.0.1:%[2]d
		database_name = %[3]s
		key_stash_file = %[4]s
		acl_file = %[5]s
	}
[logging]
	kdc = STDERR
`, s.Realm, port, filepath.Join(s.dir, "principal"), filepath.Join(s.dir, "stash"), filepath.Join(s.dir, "kadm5.acl"))
	if err := os.WriteFile(filepath.Join(s.dir, "kdc.conf"), []byte(kdcConf), 0o600); err != nil {
		return err
	}
	s.Krb5Conf = filepath.Join(s.dir, "krb5.conf")
	krb5Conf := fmt.Sprintf(`[libdefaults]
	default_realm = %[1]s
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	udp_preference_limit = 1
[realms]
	%[1]s = {
		kdc = %[2]s
	}
`, s.Realm, s.Addr)
	return os.WriteFile(s.Krb5Conf, []byte(krb5Conf), 0o644)
}

// env points the Kerberos tools at this realm's files, not /etc's.
func (s *Server) env() []string {
	return append(os.Environ(), "KRB5_CONFIG="+s.Krb5Conf, "KRB5_KDC_PROFILE="+filepath.Join(s.dir, "kdc.conf"))
}

// admin runs one of the database tools (kdb5_util, kadmin.local).
func (s *Server) admin(tool string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.opts.Sbin, tool), args...)
	cmd.Dir, cmd.Env = s.dir, s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kdc: %s %s: %w\n%s", tool, strings.Join(redact(args), " "), err, out)
	}
	return nil
}

// redact hides the passwords in a tool's arguments from an error.
func redact(args []string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if i > 0 && (out[i-1] == "-P" || out[i-1] == "-pw") {
			out[i] = "***"
		}
	}
	return out
}

// kadmin runs one kadmin.local query on the realm. kadmin.local exits 0
// whatever the query did: a failure shows only as a line on stderr, so
// any stderr line but its notice about policies is one.
func (s *Server) kadmin(query string) error {
	cmd := exec.Command(filepath.Join(s.opts.Sbin, "kadmin.local"), "-r", s.Realm, "-q", query)
	cmd.Dir, cmd.Env = s.dir, s.env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var failed []string
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, "No policy specified for ") {
			failed = append(failed, line)
		}
	}
	if err == nil && len(failed) > 0 {
		err = errors.New(strings.Join(failed, "; "))
	}
	if err != nil {
		verb, _, _ := strings.Cut(query, " ")
		return fmt.Errorf("kdc: kadmin.local %s: %w", verb, err)
	}
	return nil
}

// AddUser adds principal name@Realm with password; like an Active
// Directory account, it must pre-authenticate, so a wrong password is
// the KDC's refusal (PREAUTH_FAILED), not a reply the client cannot
// decrypt.
func (s *Server) AddUser(name, password string) error {
	if strings.ContainsAny(name+password, "\"\n") {
		return errors.New("kdc: a name or password with a quote or newline")
	}
	return s.kadmin(fmt.Sprintf("addprinc -pw \"%s\" +requires_preauth %s", password, name))
}

// AddService adds principal (e.g. "DNS/ns.example.org") with a random key
// and appends its keys to keytab, for the service to accept tickets with.
func (s *Server) AddService(principal, keytab string) error {
	if strings.ContainsAny(principal+keytab, "\" \n") {
		return errors.New("kdc: a principal or keytab path with a quote or space")
	}
	if err := s.kadmin("addprinc -randkey " + principal); err != nil {
		return err
	}
	return s.kadmin(fmt.Sprintf("ktadd -k %s %s", keytab, principal))
}

// waitReady waits until the KDC accepts TCP connections.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(s.opts.StartTimeout)
	for {
		if err := daemon.PortTaken(s.proc, "Address already in use"); err != nil {
			return fmt.Errorf("kdc: %w", err)
		}
		select {
		case <-s.proc.Exited():
			return fmt.Errorf("kdc: %w", s.proc.ExitError())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kdc: not listening on %s after %s: %v\n%s", s.Addr, s.opts.StartTimeout, err, daemon.LastLines(s.proc.Output(), 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Dir is the KDC's temporary directory, removed by Stop: a place for
// keytabs.
func (s *Server) Dir() string { return s.dir }

// Log returns the last part of the KDC's output.
func (s *Server) Log() string { return s.proc.Output() }

// Halt stops the KDC but keeps its files (krb5.conf, the database): the
// realm is down, its clients configured as before, until Restart.
func (s *Server) Halt() error { return s.proc.Stop() }

// Restart starts a halted KDC again on the same port and waits until it
// listens.
func (s *Server) Restart(ctx context.Context) error {
	if err := daemon.Restartable(s.proc, s.dir); err != nil {
		return fmt.Errorf("kdc: %w", err)
	}
	cmd := exec.Command(filepath.Join(s.opts.Sbin, "krb5kdc"), "-n", "-r", s.Realm)
	cmd.Dir, cmd.Env = s.dir, s.env()
	var err error
	if s.proc, err = daemon.Start("krb5kdc", cmd); err != nil {
		return fmt.Errorf("kdc: %w", err)
	}
	return s.waitReady(ctx)
}

// Stop stops the KDC and removes its directory.
func (s *Server) Stop() error { return daemon.StopAndRemove(s.proc, &s.dir) }

// StartT starts a KDC for realm (default ZONESTREAM.TEST) and stops it
// when the test ends. Without Debian's KDC installed (hack/deps.sh
// installs it) the test is skipped, saying so.
func StartT(t testing.TB, realm string) *Server {
	t.Helper()
	if err := Installed(""); err != nil {
		t.Skipf("%v", err)
	}
	return daemon.StartT(t, "krb5kdc", func(ctx context.Context) (*Server, error) {
		return Start(ctx, Options{Realm: realm})
	})
}
