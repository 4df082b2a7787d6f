package kdc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The KDC listens on loopback with a realm of its own; principals are
// added, a service's keys written to a keytab; halted it stops
// listening and keeps its files, restarted it listens again, stopped its
// files are gone.
func TestKDC(t *testing.T) {
	s := StartT(t, "example.test")
	if s.Realm != "EXAMPLE.TEST" {
		t.Fatalf("realm %q, want EXAMPLE.TEST", s.Realm)
	}
	if host, _, _ := net.SplitHostPort(s.Addr); host != "127.0.0.1" {
		t.Fatalf("listening on %s, want loopback", s.Addr)
	}
	if err := s.AddUser("alice", "secret password"); err != nil {
		t.Fatal(err)
	}
	keytab := filepath.Join(t.TempDir(), "dns.keytab")
	if err := s.AddService("DNS/ns.example.test", keytab); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keytab); err != nil || fi.Size() == 0 {
		t.Fatalf("keytab: %v %v", fi, err)
	}
	if err := s.AddUser("alice", "again"); err == nil {
		t.Fatal("a principal added twice")
	}

	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Fatal("halted KDC still listening")
	}
	if _, err := os.Stat(s.Krb5Conf); err != nil {
		t.Fatalf("halted KDC lost its krb5.conf: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("bob", "another password"); err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory left after Stop: %v", err)
	}
}
