// Package portal is the read side of zonestream: a projection of every DNS
// name from the streams, checked against DNS, served as a JSON API, a live
// web page and server-sent events.
package portal

import (
	"flag"
	"time"

	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
)

// Config is the portal's configuration.
type Config struct {
	// Listen is the address of the page and the API.
	Listen string
	// Resolver is the DNS server asked what each name answers (host:port);
	// empty: DNS is not checked, and in sync means the provider holds
	// what is wanted.
	Resolver    string
	DNSWorkers  int
	DNSTimeout  time.Duration
	DNSInterval time.Duration
	// Grace is how long a name may differ from what is wanted and still
	// be pending rather than not in sync.
	Grace time.Duration
	// Ownership are the planner's ownership settings, to tell records
	// another owner holds (--txt-owner-id and the registry names,
	// stage.Shared).
	Ownership registry.Settings
	// Domains are the planner's domain filters (stage.Shared): a name they
	// leave out is wanted but never planned, and the portal says so.
	Domains domains.Settings
}

// RegisterFlags adds the portal's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "portal-listen", "127.0.0.1:8080", "address of the portal's web page and JSON API (loopback by default; empty disables it)")
	fs.StringVar(&c.Resolver, "portal-resolver", "", "DNS server (host:port) the portal asks what each name answers; empty: DNS is not checked")
	fs.IntVar(&c.DNSWorkers, "portal-dns-workers", 8, "DNS queries the portal may have in flight at once")
	fs.DurationVar(&c.DNSTimeout, "portal-dns-timeout", 2*time.Second, "timeout of one DNS query")
	fs.DurationVar(&c.DNSInterval, "portal-dns-interval", time.Minute, "how often each name is checked again when nothing changed (spread ±20%)")
	fs.DurationVar(&c.Grace, "portal-grace", 2*time.Minute, "how long a name may differ from what is wanted and still be pending")
}
