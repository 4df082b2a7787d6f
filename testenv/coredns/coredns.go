// Package coredns runs a real etcd (Debian's etcd-server) and a real CoreDNS
// (built by hack/coredns.sh with its etcd plugin) as processes on loopback:
// CoreDNS serves the records kept in etcd in the SkyDNS layout, the setup
// zonestream's coredns provider is tested against.
//
// Everything lives in a temporary directory (etcd's data, the Corefile);
// both listen on free loopback ports only.
package coredns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zonestream/zonestream/testenv/internal/daemon"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// Defaults of Options.
const (
	DefaultEtcd = "etcd"
	// Version is the CoreDNS release hack/coredns.sh builds by default.
	Version     = "1.14.7"
	DefaultZone = "example.org"
	// DefaultPath is the etcd plugin's path, and the provider's
	// --coredns-prefix without its trailing slash.
	DefaultPath = "/skydns"
	// BinaryEnv names a CoreDNS binary to use instead of hack/coredns.sh's.
	BinaryEnv = "ZS_COREDNS"
)

// Options configure the pair.
type Options struct {
	// Zones are the zones CoreDNS serves from etcd (default example.org).
	Zones []string
	// Path is the etcd plugin's path (default /skydns).
	Path string
	// Etcd is the etcd binary (default: etcd from $PATH).
	Etcd string
	// CoreDNS is the CoreDNS binary (default: $ZS_COREDNS, else the one
	// hack/coredns.sh caches under ~/.cache/zonestream/coredns/<Version>/).
	CoreDNS string
	// StartTimeout bounds how long Start waits for etcd and CoreDNS
	// (default 30s, also bounded by ctx).
	StartTimeout time.Duration
}

// Server is a running etcd with a CoreDNS serving its records.
type Server struct {
	Host    string // "127.0.0.1"
	DNSPort int
	DNSAddr string // "127.0.0.1:port"
	EtcdURL string // "http://127.0.0.1:port"
	Zones   []string
	Path    string
	// Etcd is a client of the etcd, for tests that write records behind
	// the provider's back.
	Etcd *clientv3.Client

	dir     string
	bin     string   // CoreDNS
	etcdCmd []string // etcd's command line, run again by Restart
	etcd    *daemon.Process
	coredns *daemon.Process
}

// Binary is the CoreDNS binary Start uses by default, and an error saying
// how to build it when it is missing.
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		return p, nil
	}
	cache := os.Getenv("ZS_CACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(dir, "zonestream")
	}
	p := filepath.Join(cache, "coredns", Version, "coredns")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("coredns: CoreDNS %s is not built (run hack/coredns.sh, or set $%s): %w", Version, BinaryEnv, err)
	}
	return p, nil
}

// Start runs etcd and CoreDNS on free loopback ports until Stop, and
// returns once CoreDNS answers the SOA of every zone.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if len(opts.Zones) == 0 {
		opts.Zones = []string{DefaultZone}
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Etcd == "" {
		opts.Etcd = DefaultEtcd
	}
	etcd, err := exec.LookPath(opts.Etcd)
	if err != nil {
		return nil, fmt.Errorf("coredns: etcd not found (apt-get install etcd-server, or hack/deps.sh): %w", err)
	}
	opts.Etcd = etcd
	if opts.CoreDNS == "" {
		if opts.CoreDNS, err = Binary(); err != nil {
			return nil, err
		}
	}
	zones, err := daemon.Zones("coredns", opts.Zones)
	if err != nil {
		return nil, err
	}
	return daemon.Retry(ctx, "coredns", func() (*Server, error) {
		s := &Server{Host: "127.0.0.1", Zones: zones, Path: "/" + strings.Trim(opts.Path, "/")}
		if err := s.start(ctx, opts); err != nil {
			return nil, err
		}
		return s, nil
	})
}

// portTaken says whether p (etcd or CoreDNS) could not bind its ports.
func portTaken(p *daemon.Process) error {
	return daemon.PortTaken(p, "address already in use", "bind: address")
}

func (s *Server) start(ctx context.Context, opts Options) (err error) {
	if s.dir, err = os.MkdirTemp("", "zonestream-coredns-"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	deadline := time.Now().Add(opts.StartTimeout)
	if err := s.startEtcd(ctx, opts.Etcd, deadline); err != nil {
		return err
	}
	s.bin = opts.CoreDNS
	if s.DNSPort, err = loopback.Port(true); err != nil {
		return err
	}
	s.DNSAddr = net.JoinHostPort(s.Host, strconv.Itoa(s.DNSPort))
	return s.startCoreDNS(ctx, deadline)
}

func (s *Server) startEtcd(ctx context.Context, bin string, deadline time.Time) error {
	clientPort, err := loopback.Port(false)
	if err != nil {
		return err
	}
	peerPort, err := loopback.Port(false)
	if err != nil {
		return err
	}
	s.EtcdURL = "http://" + net.JoinHostPort(s.Host, strconv.Itoa(clientPort))
	peer := "http://" + net.JoinHostPort(s.Host, strconv.Itoa(peerPort))
	s.etcdCmd = []string{bin,
		"--name=zonestream",
		"--data-dir=" + filepath.Join(s.dir, "etcd"),
		"--listen-client-urls=" + s.EtcdURL,
		"--advertise-client-urls=" + s.EtcdURL,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=zonestream=" + peer,
		"--initial-cluster-state=new",
		"--logger=zap", "--log-level=warn",
	}
	if err := s.runEtcd(ctx, deadline); err != nil {
		return err
	}
	s.Etcd, err = s.dialEtcd()
	return err
}

// runEtcd starts etcd on s.etcdCmd (a data directory already there is
// taken as it is) and waits until it is healthy.
func (s *Server) runEtcd(ctx context.Context, deadline time.Time) error {
	var err error
	if s.etcd, err = daemon.Start("etcd", exec.Command(s.etcdCmd[0], s.etcdCmd[1:]...)); err != nil {
		return fmt.Errorf("coredns: %w", err)
	}
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.etcd.Exited():
			return s.exitErr(s.etcd)
		default:
		}
		if err := portTaken(s.etcd); err != nil {
			return fmt.Errorf("coredns: etcd: %w", err)
		}
		if resp, err := hc.Get(s.EtcdURL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("coredns: etcd not healthy:\n%s", daemon.LastLines(s.etcd.Output(), 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) dialEtcd() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: []string{s.EtcdURL}, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(),
	})
}

func (s *Server) startCoreDNS(ctx context.Context, deadline time.Time) (err error) {
	var blocks []string
	for _, z := range s.Zones {
		blocks = append(blocks, z+":"+strconv.Itoa(s.DNSPort))
	}
	corefile := fmt.Sprintf(`%s {
    bind %s
    errors
    log
    etcd %s {
        path %s
        endpoint %s
    }
}
`, strings.Join(blocks, " "), s.Host, strings.Join(s.Zones, " "), s.Path, s.EtcdURL)
	conf := filepath.Join(s.dir, "Corefile")
	if err := os.WriteFile(conf, []byte(corefile), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "-conf", conf)
	cmd.Dir = s.dir
	if s.coredns, err = daemon.Start("coredns", cmd); err != nil {
		return fmt.Errorf("coredns: %w", err)
	}
	if err := daemon.WaitZones(ctx, s.coredns, s.DNSAddr, s.Zones, deadline, func() error { return portTaken(s.coredns) }); err != nil {
		return fmt.Errorf("coredns: %w", err)
	}
	return nil
}

// exitErr reports why a process ended before it was ready.
func (s *Server) exitErr(p *daemon.Process) error {
	if err := portTaken(p); err != nil {
		return fmt.Errorf("coredns: %w", err)
	}
	return fmt.Errorf("coredns: %w", p.ExitError())
}

// Key is the etcd key of a record of name in the SkyDNS layout: the path,
// the labels reversed, then id (none when id is empty).
func (s *Server) Key(name, id string) string {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(name), "."), ".")
	var b strings.Builder
	b.WriteString(s.Path)
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteString("/" + labels[i])
	}
	if id != "" {
		b.WriteString("/" + id)
	}
	return b.String()
}

// Put writes value at key, as an operator with etcdctl would.
func (s *Server) Put(key, value string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Etcd.Put(ctx, key, value)
	return err
}

// Delete removes key.
func (s *Server) Delete(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Etcd.Delete(ctx, key)
	return err
}

// Keys returns every key under prefix with its value.
func (s *Server) Keys(prefix string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.Etcd.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(r.Kvs))
	for _, kv := range r.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out, nil
}

// Stop stops CoreDNS and etcd and removes the directory.
func (s *Server) Stop() error {
	var errs []error
	if s.Etcd != nil {
		_ = s.Etcd.Close()
		s.Etcd = nil
	}
	if s.coredns != nil {
		errs = append(errs, s.coredns.Stop())
	}
	if s.etcd != nil {
		errs = append(errs, s.etcd.Stop())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
		s.dir = ""
	}
	return errors.Join(errs...)
}

// Halt stops etcd, the store CoreDNS serves from and the provider writes
// to, but keeps its data: writes fail and CoreDNS cannot answer from it
// until Restart. CoreDNS keeps running.
func (s *Server) Halt() error { return s.etcd.Stop() }

// Restart starts a halted etcd again on the same ports with the same data,
// and waits until it is healthy and CoreDNS answers from it again: CoreDNS'
// client reconnects with gRPC's backoff, which grows with the outage (to
// at most 2 minutes).
func (s *Server) Restart(ctx context.Context) error {
	if err := s.RestartEtcd(ctx); err != nil {
		return err
	}
	return s.waitServed(ctx, time.Now().Add(2*time.Minute+10*time.Second))
}

// RestartEtcd starts a halted etcd again on the same ports with the same
// data and waits until it is healthy, not for CoreDNS: for tests of how a
// client comes back. Etcd is a fresh client, since the old one may still be
// in gRPC's reconnect backoff.
func (s *Server) RestartEtcd(ctx context.Context) error {
	if err := daemon.Restartable(s.etcd, s.dir); err != nil {
		return fmt.Errorf("coredns: %w", err)
	}
	if err := s.runEtcd(ctx, time.Now().Add(30*time.Second)); err != nil {
		return err
	}
	c, err := s.dialEtcd()
	if err != nil {
		return err
	}
	if s.Etcd != nil {
		_ = s.Etcd.Close()
	}
	s.Etcd = c
	return nil
}

// StopEtcd is Halt, for tests of an unreachable store.
func (s *Server) StopEtcd() error { return s.Halt() }

// waitServed polls CoreDNS every 100ms until it answers a name of every
// zone from etcd (a name with no record is answered too; SERVFAIL, or no
// answer, is not).
func (s *Server) waitServed(ctx context.Context, deadline time.Time) error {
	for _, z := range s.Zones {
		for {
			_, err := s.Query("zonestream-probe."+z, dns.TypeA)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("coredns: not answering from etcd again: %v:\n%s", err, daemon.LastLines(s.Log(), 30))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// Log returns the last part of CoreDNS' and etcd's output.
func (s *Server) Log() string {
	var b strings.Builder
	if s.coredns != nil {
		b.WriteString("--- coredns\n" + s.coredns.Output())
	}
	if s.etcd != nil {
		b.WriteString("--- etcd\n" + s.etcd.Output())
	}
	return b.String()
}

// StartT starts etcd and CoreDNS for the test with the given zones
// (default example.org) and stops them afterwards. A CoreDNS that is not
// built fails the test with the command that builds it.
func StartT(t testing.TB, zones ...string) *Server {
	t.Helper()
	s := daemon.StartT(t, "coredns/etcd", func(ctx context.Context) (*Server, error) {
		return Start(ctx, Options{Zones: zones})
	})
	t.Cleanup(func() { // runs before the Stop above
		if t.Failed() {
			t.Logf("CoreDNS/etcd output:\n%s", daemon.LastLines(s.Log(), 60))
		}
	})
	return s
}

// Query asks CoreDNS for name/qtype (see daemon.Query).
func (s *Server) Query(name string, qtype uint16) ([]dns.RR, error) {
	return daemon.Query(s.DNSAddr, name, qtype)
}
