package coredns

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// The environment variables ExternalDNS' coredns provider is configured
// with; read when the matching flag is not set, so a Deployment moved over
// from ExternalDNS keeps working.
const (
	EnvURLs          = "ETCD_URLS"
	EnvCAFile        = "ETCD_CA_FILE"
	EnvCertFile      = "ETCD_CERT_FILE"
	EnvKeyFile       = "ETCD_KEY_FILE"
	EnvTLSServerName = "ETCD_TLS_SERVER_NAME"
	EnvTLSInsecure   = "ETCD_TLS_INSECURE"
	EnvUsername      = "ETCD_USERNAME"
	EnvPassword      = "ETCD_PASSWORD"
)

// Defaults.
const (
	DefaultURL    = "http://localhost:2379"
	DefaultPrefix = "/skydns/"
	// DefaultMaxTxnOps is etcd's own default --max-txn-ops.
	DefaultMaxTxnOps = 128
)

// Name is the provider's --provider value and subject token.
const Name = "coredns"

// Config holds the provider's flags.
type Config struct {
	EtcdURLs      stage.StringList
	CAFile        string
	CertFile      string
	KeyFile       string
	TLSServerName string
	TLSInsecure   bool
	Username      string
	Password      string
	// Prefix is where the records live in etcd, the etcd plugin's path
	// with a trailing slash (--coredns-prefix, default /skydns/).
	Prefix string
	// Zones are the zones the provider manages (--coredns-zone): etcd has
	// no notion of a zone.
	Zones stage.StringList
	// MaxTxnOps is the most operations one etcd transaction may hold (the
	// server's --max-txn-ops); larger plans are applied in several.
	MaxTxnOps int

	// Its Timeout bounds one etcd request.
	provider.RetryConfig
}

// RegisterFlags registers the --coredns-* flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.EtcdURLs, "coredns-etcd-urls", "when using the CoreDNS provider, the etcd endpoints, http:// or https:// (repeatable or comma-separated; default: $"+EnvURLs+", else "+DefaultURL+")")
	fs.StringVar(&c.CAFile, "coredns-etcd-ca-file", "", "when using the CoreDNS provider, the CA bundle that signs etcd's certificate (default: $"+EnvCAFile+")")
	fs.StringVar(&c.CertFile, "coredns-etcd-cert-file", "", "when using the CoreDNS provider, the client certificate for etcd (default: $"+EnvCertFile+")")
	fs.StringVar(&c.KeyFile, "coredns-etcd-key-file", "", "when using the CoreDNS provider, the client certificate's key (default: $"+EnvKeyFile+")")
	fs.StringVar(&c.TLSServerName, "coredns-etcd-tls-server-name", "", "when using the CoreDNS provider, the name etcd's certificate is checked against (default: $"+EnvTLSServerName+")")
	fs.BoolVar(&c.TLSInsecure, "coredns-etcd-tls-insecure", false, "when using the CoreDNS provider, do not verify etcd's certificate (also on when $"+EnvTLSInsecure+" is true, yes or 1)")
	fs.StringVar(&c.Username, "coredns-etcd-username", "", "when using the CoreDNS provider, the etcd user (default: $"+EnvUsername+")")
	stage.SecretVar(fs, &c.Password, "coredns-etcd-password", "when using the CoreDNS provider, the etcd user's password (default: $"+EnvPassword+")")
	fs.StringVar(&c.Prefix, "coredns-prefix", DefaultPrefix, "when using the CoreDNS provider, the etcd key prefix of the records (the etcd plugin's path)")
	fs.Var(&c.Zones, "coredns-zone", "when using the CoreDNS provider, a zone to manage, as served by the etcd plugin (repeatable, or comma-separated; required)")
	fs.IntVar(&c.MaxTxnOps, "coredns-max-txn-ops", DefaultMaxTxnOps, "when using the CoreDNS provider, the most operations in one etcd transaction (etcd's --max-txn-ops)")
}

// Validate fills what flags left unset from ExternalDNS' environment
// variables and defaults, and checks the result.
func (c *Config) Validate() error {
	fromEnv := func(v *string, env string) {
		if *v == "" {
			*v = os.Getenv(env)
		}
	}
	if len(c.EtcdURLs) == 0 {
		if err := c.EtcdURLs.Set(os.Getenv(EnvURLs)); err != nil {
			return err
		}
	}
	if len(c.EtcdURLs) == 0 {
		c.EtcdURLs = stage.StringList{DefaultURL}
	}
	fromEnv(&c.CAFile, EnvCAFile)
	fromEnv(&c.CertFile, EnvCertFile)
	fromEnv(&c.KeyFile, EnvKeyFile)
	fromEnv(&c.TLSServerName, EnvTLSServerName)
	fromEnv(&c.Username, EnvUsername)
	fromEnv(&c.Password, EnvPassword)
	stage.RememberSecret(c.Password) // $ETCD_PASSWORD is no flag: Parse did not see it
	switch strings.ToLower(os.Getenv(EnvTLSInsecure)) {
	case "true", "yes", "1":
		c.TLSInsecure = true
	}

	scheme := ""
	for _, u := range c.EtcdURLs {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return fmt.Errorf("coredns: etcd URL %q: want http://host:port or https://host:port", u)
		}
		if scheme != "" && pu.Scheme != scheme {
			return errors.New("coredns: etcd URLs mix http:// and https://")
		}
		scheme = pu.Scheme
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("coredns: --coredns-etcd-cert-file and --coredns-etcd-key-file go together")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	c.Prefix = "/" + strings.Trim(c.Prefix, "/") + "/"
	if c.Prefix == "//" {
		return errors.New("coredns: --coredns-prefix must not be empty or /")
	}
	zones := make([]string, 0, len(c.Zones))
	for _, z := range c.Zones {
		n := events.NormalizeName(z)
		if n == "" || strings.Contains(n, "/") {
			return fmt.Errorf("coredns: --coredns-zone %q is not a zone name", z)
		}
		zones = append(zones, n)
	}
	if len(zones) == 0 {
		return errors.New("coredns: --coredns-zone is required: etcd has no zones, name the ones CoreDNS' etcd plugin serves")
	}
	c.Zones = zones
	if c.MaxTxnOps <= 0 {
		c.MaxTxnOps = DefaultMaxTxnOps
	}
	c.RetryConfig.Defaults()
	return nil
}

// https reports whether the endpoints are reached over TLS.
func (c *Config) https() bool { return strings.HasPrefix(c.EtcdURLs[0], "https://") }

// tlsConfig builds the client TLS settings from the files named.
func (c *Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{ServerName: c.TLSServerName, InsecureSkipVerify: c.TLSInsecure} //nolint:gosec // --coredns-etcd-tls-insecure
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("coredns: etcd client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("coredns: etcd CA file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("coredns: etcd CA file %s holds no PEM certificate", c.CAFile)
		}
	}
	return tc, nil
}
