package webhook

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// DefaultURL is where ExternalDNS expects its webhook provider: a sidecar
// on the loopback interface.
const DefaultURL = "http://localhost:8888"

// DefaultMaxBodySize is ExternalDNS' bound on a webhook body (32 MiB,
// about 60,000 records).
const DefaultMaxBodySize = 32 << 20

// Name is the provider's --provider value and subject token.
const Name = "webhook"

// Config holds the provider's flags: ExternalDNS' --webhook-provider-*
// flags, and --webhook-zone, which the protocol has no equivalent of.
type Config struct {
	URL string
	// ReadTimeout bounds a GET (negotiation, listing); WriteTimeout a
	// POST of changes. As ExternalDNS' flags of the same name, they are
	// also the read and write timeouts of `zonestream webhook-server`.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	// ReadHeaderTimeout and IdleTimeout are `zonestream webhook-server`'s
	// (ExternalDNS v0.23's --webhook-provider-read-header-timeout and
	// --webhook-provider-idle-timeout, for its webhook server).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// MaxBodySize bounds a body both ways (v0.23's
	// --webhook-provider-max-body-size): an answer larger than it is an
	// error of the client, a request larger than it a 413 of the server;
	// 0: no bound.
	MaxBodySize int64
	// Zones are the zones the applier manages through the webhook. Empty:
	// the include list of the domain filter the webhook negotiates.
	Zones stage.StringList

	// Retries is how often a transient failure of a request is retried
	// (default 3; negative: none).
	Retries int
	// RetryBackoff is the first retry's delay, doubled each time, with
	// jitter (default 250ms).
	RetryBackoff time.Duration
}

// RegisterFlags registers --webhook-provider-url,
// --webhook-provider-read-timeout, --webhook-provider-write-timeout and
// --webhook-zone.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.URL, "webhook-provider-url", DefaultURL, "when using the webhook provider, the URL of the webhook provider (ExternalDNS' webhook protocol)")
	fs.DurationVar(&c.ReadTimeout, "webhook-provider-read-timeout", 5*time.Second, "when using the webhook provider, the timeout of a GET to it (negotiation, listing); the read timeout of webhook-server")
	fs.DurationVar(&c.WriteTimeout, "webhook-provider-write-timeout", 10*time.Second, "when using the webhook provider, the timeout of a POST of changes to it; the write timeout of webhook-server")
	fs.DurationVar(&c.ReadHeaderTimeout, "webhook-provider-read-header-timeout", 5*time.Second, "the header read timeout of webhook-server, bounding slow header sends apart from the read timeout")
	fs.DurationVar(&c.IdleTimeout, "webhook-provider-idle-timeout", 30*time.Second, "the idle timeout of webhook-server's keep-alive connections")
	fs.Int64Var(&c.MaxBodySize, "webhook-provider-max-body-size", DefaultMaxBodySize, "largest webhook request or response body in bytes: a larger answer is an error, a larger request is refused (413); 0: no limit")
	fs.Var(&c.Zones, "webhook-zone", "when using the webhook provider, a zone to manage (repeatable, or comma-separated; default: the include list of the domain filter the webhook negotiates)")
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return fmt.Errorf("webhook: --webhook-provider-url %q: %w", c.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook: --webhook-provider-url %q: want http://host:port or https://host:port", u.Redacted())
	}
	if password, ok := u.User.Password(); ok {
		// Not a secret flag, but a secret: a server may echo it.
		stage.RememberSecret(password)
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 5 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Second
	}
	if c.MaxBodySize < 0 {
		return fmt.Errorf("webhook: --webhook-provider-max-body-size=%d: want 0 (no limit) or more", c.MaxBodySize)
	}
	for _, z := range c.Zones {
		if zoneName(z) == "" {
			return errors.New("webhook: empty --webhook-zone")
		}
	}
	provider.RetryDefaults(nil, &c.Retries, &c.RetryBackoff)
	return nil
}

// zoneName turns a domain filter entry into a zone name (".example.org",
// "subdomains only" in a filter, is the zone example.org).
func zoneName(s string) string {
	return events.NormalizeName(strings.TrimPrefix(strings.TrimSpace(s), "."))
}
