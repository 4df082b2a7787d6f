package bind_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/pki"
)

// TestTLSListener checks what BIND 9.18 takes over DNS over TLS: a
// signed UPDATE, a query and a signed AXFR.
func TestTLSListener(t *testing.T) {
	dir := t.TempDir()
	ca := pki.New(t, dir, "ca")
	cert, key := ca.Issue(t, dir, "named", x509.ExtKeyUsageServerAuth)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := bind.Start(ctx, bind.Options{TLS: &bind.TLS{CertFile: cert, KeyFile: key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13, NextProtos: []string{"dot"}}

	rr, _ := dns.NewRR("overtls.example.org. 120 IN A 192.0.2.9")
	m := new(dns.Msg)
	m.SetUpdate("example.org.")
	m.Insert([]dns.RR{rr})
	m.SetTsig(s.KeyName, dns.Fqdn(s.Algorithm), 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp-tls", TLSConfig: cfg, Timeout: 5 * time.Second, TsigSecret: s.TsigSecret()}
	r, _, err := c.Exchange(m, s.TLSAddr)
	if err != nil {
		t.Fatalf("UPDATE over TLS: %v\n%s", err, s.Log())
	}
	if r.Rcode != dns.RcodeSuccess {
		t.Fatalf("UPDATE over TLS: %s\n%s", dns.RcodeToString[r.Rcode], s.Log())
	}

	q := new(dns.Msg)
	q.SetQuestion("overtls.example.org.", dns.TypeA)
	r, _, err = (&dns.Client{Net: "tcp-tls", TLSConfig: cfg, Timeout: 5 * time.Second}).Exchange(q, s.TLSAddr)
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("query over TLS: %v %v", r, err)
	}

	x := new(dns.Msg)
	x.SetAxfr("example.org.")
	x.SetTsig(s.KeyName, dns.Fqdn(s.Algorithm), 300, time.Now().Unix())
	conn, err := dns.DialWithTLS("tcp", s.TLSAddr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &dns.Transfer{Conn: conn, TsigSecret: s.TsigSecret()}
	env, err := tr.In(x, s.TLSAddr)
	if err != nil {
		t.Fatalf("AXFR over TLS: %v", err)
	}
	found := false
	for e := range env {
		if e.Error != nil {
			t.Fatalf("AXFR over TLS: %v\n%s", e.Error, s.Log())
		}
		for _, rr := range e.RR {
			found = found || rr.Header().Name == "overtls.example.org."
		}
	}
	if !found {
		t.Fatal("AXFR over TLS lacks the record the UPDATE added")
	}
}
