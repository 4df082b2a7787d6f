package rfc2136

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// TLSConfig is DNS over TLS (RFC 7858) to the server, under ExternalDNS'
// flags: every UPDATE and zone transfer goes over TLS when Use is set.
type TLSConfig struct {
	Use        bool
	SkipVerify bool
	// CAFile verifies the server (default: the system's roots).
	CAFile string
	// ClientCertFile and ClientKeyFile, both or neither, are presented to
	// a server that asks for a client certificate.
	ClientCertFile, ClientKeyFile string
}

func (c *TLSConfig) registerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Use, "rfc2136-use-tls", false, "when using the RFC2136 provider, send updates and zone transfers over TLS "+
		"(DNS over TLS, RFC 7858; the port is still --rfc2136-port, usually 853 for TLS)")
	fs.BoolVar(&c.SkipVerify, "rfc2136-skip-tls-verify", false, "when using TLS with the RFC2136 provider, do not verify the server's certificate")
	fs.StringVar(&c.CAFile, "tls-ca", "", "when using TLS (--rfc2136-use-tls), the CA certificates (PEM) to verify the server with (default: the system's roots)")
	fs.StringVar(&c.ClientCertFile, "tls-client-cert", "", "when using TLS (--rfc2136-use-tls), the certificate (PEM) to present as a client (with --tls-client-cert-key)")
	fs.StringVar(&c.ClientKeyFile, "tls-client-cert-key", "", "when using TLS (--rfc2136-use-tls), the key (PEM) of --tls-client-cert")
}

// build returns the TLS configuration for the server host, nil without
// Use. It reads the files now: a missing one fails at start.
func (c TLSConfig) build(host string) (*tls.Config, error) {
	if !c.Use {
		return nil, nil
	}
	if (c.ClientCertFile == "") != (c.ClientKeyFile == "") {
		return nil, errors.New("rfc2136: --tls-client-cert and --tls-client-cert-key go together")
	}
	cfg := &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: c.SkipVerify,
		// RFC 9103 (zone transfer over TLS): TLS 1.3 and ALPN "dot".
		MinVersion: tls.VersionTLS13,
		NextProtos: []string{"dot"},
	}
	if c.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("rfc2136: --tls-client-cert: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("rfc2136: --tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("rfc2136: --tls-ca %s: no PEM certificate", c.CAFile)
		}
	}
	return cfg, nil
}

// unverified marks err permanent when it is the server's certificate
// failing verification: like a rejected TSIG key, a configuration error
// that retrying does not heal.
func unverified(err error) error {
	var v *tls.CertificateVerificationError
	if errors.As(err, &v) {
		return provider.Permanentf("%w (check --tls-ca, or --rfc2136-skip-tls-verify)", err)
	}
	return err
}
