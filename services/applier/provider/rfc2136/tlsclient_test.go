package rfc2136_test

import (
	"context"
	"crypto/x509"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/pki"
)

// A server asking for a client certificate (BIND's ca-file) gets the one
// of --tls-client-cert and --tls-client-cert-key, and refuses a client
// without one. BIND closes the connection without a TLS alert, so the
// client sees only EOF: a transient error, retried.
func TestTLSClientCert(t *testing.T) {
	dir := t.TempDir()
	ca := pki.New(t, dir, "ca")
	cert, key := ca.Issue(t, dir, "named", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.Issue(t, dir, "zonestream", x509.ExtKeyUsageClientAuth)
	s := bind.StartTLST(t, &bind.TLS{CertFile: cert, KeyFile: key, ClientCAFile: ca.File}, "example.org")
	ctx := context.Background()
	change := []events.Change{{New: ep("mtls.example.org", "A", 60, "192.0.2.3")}}

	without := newProvider(t, s, overTLS(rfc2136.TLSConfig{CAFile: ca.File}, s))
	if _, err := without.Records(ctx, "example.org"); err == nil {
		t.Fatal("listing without a client certificate succeeded")
	} else {
		t.Log(err)
	}
	if err := without.Apply(ctx, "example.org", change); err == nil {
		t.Fatal("updating without a client certificate succeeded")
	} else {
		t.Log(err)
	}
	if rrs, err := s.Query("mtls.example.org", dns.TypeA); err != nil || len(rrs) != 0 {
		t.Fatalf("written without a client certificate: %v %v", rrs, err)
	}

	with := newProvider(t, s, overTLS(rfc2136.TLSConfig{CAFile: ca.File, ClientCertFile: clientCert, ClientKeyFile: clientKey}, s))
	if err := with.Apply(ctx, "example.org", change); err != nil {
		t.Fatalf("%v\n%s", err, s.Log())
	}
	if _, err := with.Records(ctx, "example.org"); err != nil {
		t.Fatal(err)
	}
}
