package rfc2136_test

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/pki"
)

// startTLS runs named with a DNS over TLS listener whose certificate, for
// 127.0.0.1, is signed by the returned CA.
func startTLS(t *testing.T, zones ...string) (*bind.Server, *pki.Authority) {
	t.Helper()
	dir := t.TempDir()
	ca := pki.New(t, dir, "ca")
	cert, key := ca.Issue(t, dir, "named", x509.ExtKeyUsageServerAuth)
	return bind.StartTLST(t, &bind.TLS{CertFile: cert, KeyFile: key}, zones...), ca
}

// overTLS points the provider at the TLS listener.
func overTLS(tls rfc2136.TLSConfig, s *bind.Server) func(*rfc2136.Config) {
	return func(c *rfc2136.Config) {
		c.Port = s.TLSPort
		c.TLS = tls
		c.TLS.Use = true
	}
}

func TestConformanceOverTLS(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s, ca := startTLS(t, "example.org", "example.net")
		return newProvider(t, s, func(c *rfc2136.Config) {
			overTLS(rfc2136.TLSConfig{CAFile: ca.File}, s)(c)
			if tune != nil {
				tune(&c.RetryConfig)
			}
		}), providertest.BIND{Server: s}
	}, providertest.Options{ApexNS: true})
}

// A server whose certificate the CA does not sign is refused before
// anything is sent: permanently, as a rejected TSIG key is.
func TestTLSWrongCA(t *testing.T) {
	s, _ := startTLS(t, "example.org")
	other := pki.New(t, t.TempDir(), "other")
	p := newProvider(t, s, overTLS(rfc2136.TLSConfig{CAFile: other.File}, s))
	ctx := context.Background()
	err := p.Apply(ctx, "example.org", []events.Change{{New: ep("wrongca.example.org", "A", 60, "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "--tls-ca") {
		t.Fatalf("want a permanent error naming --tls-ca, got %v", err)
	}
	if rrs, err := s.Query("wrongca.example.org", dns.TypeA); err != nil || len(rrs) != 0 {
		t.Fatalf("written despite the unverified server: %v %v", rrs, err)
	}
	t.Log(err)
	_, err = p.Records(ctx, "example.org")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("listing an unverified server: %v", err)
	}
	t.Log(err)
}

// With --rfc2136-skip-tls-verify a server no CA vouches for is used:
// UPDATE, the AXFR listing and an IXFR reading back, all over TLS.
func TestTLSSkipVerify(t *testing.T) {
	s, _ := startTLS(t, "example.org")
	p := newProvider(t, s, overTLS(rfc2136.TLSConfig{SkipVerify: true}, s))
	ctx := context.Background()
	if _, err := p.Records(ctx, "example.org"); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{{New: ep("skip.example.org", "A", 60, "192.0.2.2")}}); err != nil {
		t.Fatal(err)
	}
	eps, err := p.IXFR(ctx, "example.org", []string{"skip.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || eps[0].Targets[0] != "192.0.2.2" {
		t.Fatalf("IXFR over TLS: %v", eps)
	}
	if p.AXFRs() != 1 {
		t.Fatalf("%d AXFRs, want the first listing's only", p.AXFRs())
	}
}

// Over plain TCP (no --rfc2136-use-tls) the TLS listener answers nothing
// a DNS client understands: proof the tests above did talk TLS.
func TestTLSListenerIsNotPlainDNS(t *testing.T) {
	s, _ := startTLS(t, "example.org")
	p := newProvider(t, s, func(c *rfc2136.Config) {
		c.Port = s.TLSPort
		c.RetryConfig = provider.RetryConfig{Timeout: 500 * time.Millisecond, Retries: 1, RetryBackoff: time.Millisecond}
	})
	if _, err := p.Records(context.Background(), "example.org"); err == nil {
		t.Fatal("plain AXFR from the TLS listener succeeded")
	}
}

func TestTLSClientCertNeedsKey(t *testing.T) {
	_, err := rfc2136.New(rfc2136.Config{Host: "127.0.0.1", Zones: []string{"example.org"}, Insecure: true,
		BatchChangeSize: 1, TLS: rfc2136.TLSConfig{Use: true, ClientCertFile: "cert.pem"}}, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "--tls-client-cert-key") {
		t.Fatalf("want an error naming --tls-client-cert-key, got %v", err)
	}
}
