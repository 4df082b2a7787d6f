package pdns

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// APIKeyEnv is read for the API key when --pdns-api-key is not set, as
// ExternalDNS reads its flags from EXTERNAL_DNS_* variables; it keeps the
// key off the command line.
const APIKeyEnv = "EXTERNAL_DNS_PDNS_API_KEY"

// Name is the provider's --provider value and subject token.
const Name = "pdns"

// Config holds the provider's flags, named as ExternalDNS' pdns flags.
type Config struct {
	Server        string
	APIKey        string
	ServerID      string
	SkipTLSVerify bool
	// FullListingEvery makes every Nth listing of a zone a full download;
	// the others download it only when its serial moved. 0 or 1: always.
	FullListingEvery int

	// Its Timeout bounds one HTTP request.
	provider.RetryConfig
}

// RegisterFlags registers the --pdns-* flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Server, "pdns-server", "http://localhost:8081", "when using the PowerDNS provider, the URL of its HTTP API (webserver)")
	stage.SecretVar(fs, &c.APIKey, "pdns-api-key", "when using the PowerDNS provider, the API key (default: $"+APIKeyEnv+")")
	fs.StringVar(&c.ServerID, "pdns-server-id", "localhost", "when using the PowerDNS provider, the server id in the API path (/api/v1/servers/<id>)")
	fs.IntVar(&c.FullListingEvery, "pdns-full-listing-every", 10, "when using the PowerDNS provider, every Nth listing of a zone (--interval) downloads it whatever its serial; "+
		"the others download it only when its serial or edited_serial moved (0 or 1: always download)")
	fs.BoolVar(&c.SkipTLSVerify, "pdns-skip-tls-verify", false, "when using the PowerDNS provider, do not verify the API server's TLS certificate")
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Server == "" {
		c.Server = "http://localhost:8081"
	}
	u, err := url.Parse(c.Server)
	if err != nil {
		return fmt.Errorf("pdns: --pdns-server %q: %w", c.Server, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("pdns: --pdns-server %q: want http://host:port or https://host:port", c.Server)
	}
	if c.APIKey == "" {
		c.APIKey = os.Getenv(APIKeyEnv)
		stage.RememberSecret(c.APIKey) // not a flag: Parse did not see it
	}
	if c.APIKey == "" {
		return errors.New("pdns: --pdns-api-key (or $" + APIKeyEnv + ") is required")
	}
	if c.ServerID == "" {
		c.ServerID = "localhost"
	}
	if c.FullListingEvery < 0 {
		return fmt.Errorf("pdns: --pdns-full-listing-every must not be negative, got %d", c.FullListingEvery)
	}
	c.RetryConfig.Defaults()
	return nil
}
