package rfc2136

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// Name is the provider's --provider value and subject token.
const Name = "rfc2136"

// Config holds the provider's flags, named as ExternalDNS' rfc2136 flags.
type Config struct {
	// Hosts are the DNS servers (--rfc2136-host, repeatable), tried in
	// turn as servers.go says; Host, when set, is one more before them
	// (a Config built in code).
	Host            string
	Hosts           stage.StringList
	Port            int
	Zones           stage.StringList
	TSIGKeyName     string
	TSIGSecret      string
	TSIGSecretAlg   string
	TSIGAXFR        bool
	Insecure        bool
	MinTTL          time.Duration
	BatchChangeSize int
	// FullTransferEvery makes every Nth listing of a zone a full AXFR;
	// the others are an IXFR from the serial last seen, a lone SOA when
	// nothing changed. 0 or 1: every listing is an AXFR.
	FullTransferEvery int
	// TLS is DNS over TLS to the server (tlsconfig.go).
	TLS TLSConfig
	// GSS is GSS-TSIG (RFC 3645) negotiated by Kerberos (gsstsig.go).
	GSS GSSConfig

	// Its Timeout bounds one DNS exchange.
	provider.RetryConfig
}

// RegisterFlags registers the --rfc2136-* flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.Hosts, "rfc2136-host", "when using the RFC2136 provider, the host of the DNS server; repeatable: the others are asked in turn when the one in use does not answer")
	fs.IntVar(&c.Port, "rfc2136-port", 0, "when using the RFC2136 provider, the port of the DNS server (0: 53)")
	fs.Var(&c.Zones, "rfc2136-zone", "when using the RFC2136 provider, a zone to manage (repeatable, or comma-separated)")
	fs.StringVar(&c.TSIGKeyName, "rfc2136-tsig-keyname", "", "when using the RFC2136 provider, the TSIG key name")
	stage.SecretVar(fs, &c.TSIGSecret, "rfc2136-tsig-secret", "when using the RFC2136 provider, the TSIG secret (base64)")
	fs.StringVar(&c.TSIGSecretAlg, "rfc2136-tsig-secret-alg", "hmac-sha256", "when using the RFC2136 provider, the TSIG algorithm: hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512")
	fs.BoolVar(&c.TSIGAXFR, "rfc2136-tsig-axfr", false, "when using the RFC2136 provider, sign zone transfers (AXFR) with TSIG")
	fs.BoolVar(&c.Insecure, "rfc2136-insecure", false, "when using the RFC2136 provider, send updates without TSIG")
	fs.DurationVar(&c.MinTTL, "rfc2136-min-ttl", 0, "when using the RFC2136 provider, the lowest TTL written (records with a lower TTL get this one)")
	fs.IntVar(&c.FullTransferEvery, "rfc2136-full-transfer-every", 10, "when using the RFC2136 provider, every Nth listing of a zone (--interval) is a full AXFR; "+
		"the others ask for what changed since the serial last seen (IXFR), which is one SOA when nothing did (0 or 1: always AXFR)")
	fs.IntVar(&c.BatchChangeSize, "rfc2136-batch-change-size", 50, "when using the RFC2136 provider, the most changes sent in one UPDATE message")
	c.TLS.registerFlags(fs)
	c.GSS.registerFlags(fs)
}

var algorithms = map[string]string{
	"hmac-md5":    dns.HmacMD5,
	"hmac-sha1":   dns.HmacSHA1,
	"hmac-sha224": dns.HmacSHA224,
	"hmac-sha256": dns.HmacSHA256,
	"hmac-sha384": dns.HmacSHA384,
	"hmac-sha512": dns.HmacSHA512,
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if len(c.hosts()) == 0 {
		return errors.New("rfc2136: --rfc2136-host is required")
	}
	if c.Port == 0 {
		c.Port = 53
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("rfc2136: --rfc2136-port %d out of range", c.Port)
	}
	if len(c.Zones) == 0 {
		return errors.New("rfc2136: at least one --rfc2136-zone is required")
	}
	for _, z := range c.Zones {
		if events.NormalizeName(z) == "" {
			return errors.New("rfc2136: empty --rfc2136-zone")
		}
	}
	if c.TSIGSecretAlg == "" {
		c.TSIGSecretAlg = "hmac-sha256"
	}
	alg := strings.TrimSuffix(strings.ToLower(c.TSIGSecretAlg), ".")
	if alg == "hmac-md5.sig-alg.reg.int" {
		alg = "hmac-md5"
	}
	if _, ok := algorithms[alg]; !ok && !c.gss() {
		return fmt.Errorf("rfc2136: --rfc2136-tsig-secret-alg %q: want one of hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512", c.TSIGSecretAlg)
	}
	c.TSIGSecretAlg = alg
	if err := c.GSS.validate(); err != nil {
		return err
	}
	switch {
	case c.gss():
		// GSS-TSIG signs the UPDATEs and no key is needed; transfers go
		// unsigned, as ExternalDNS sends them with --rfc2136-gss-tsig,
		// whose users set --rfc2136-tsig-axfr to have zones listed at
		// all (New logs that it signs nothing then).
	case !c.Insecure:
		if c.TSIGKeyName == "" || c.TSIGSecret == "" {
			return errors.New("rfc2136: --rfc2136-tsig-keyname and --rfc2136-tsig-secret are required unless --rfc2136-insecure or --rfc2136-gss-tsig")
		}
		if _, err := base64.StdEncoding.DecodeString(c.TSIGSecret); err != nil {
			return fmt.Errorf("rfc2136: --rfc2136-tsig-secret is not base64: %w", err)
		}
	case c.TSIGAXFR:
		return errors.New("rfc2136: --rfc2136-tsig-axfr needs TSIG, but --rfc2136-insecure is set")
	}
	if c.MinTTL < 0 {
		return errors.New("rfc2136: --rfc2136-min-ttl must not be negative")
	}
	if c.BatchChangeSize <= 0 {
		return fmt.Errorf("rfc2136: --rfc2136-batch-change-size must be positive, got %d", c.BatchChangeSize)
	}
	if c.FullTransferEvery < 0 {
		return fmt.Errorf("rfc2136: --rfc2136-full-transfer-every must not be negative, got %d", c.FullTransferEvery)
	}
	c.RetryConfig.Defaults()
	return nil
}

// hosts are Host and Hosts, each once, in order.
func (c *Config) hosts() []string {
	var out []string
	for _, h := range append([]string{c.Host}, c.Hosts...) {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// gss says whether UPDATEs are signed with GSS-TSIG: --rfc2136-gss-tsig
// without --rfc2136-insecure, which ExternalDNS lets win.
func (c *Config) gss() bool { return c.GSS.Enabled && !c.Insecure }
