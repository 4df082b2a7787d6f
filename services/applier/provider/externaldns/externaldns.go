package externaldns

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// inProcessURL is the base URL of the in-process webhook: never dialled.
const inProcessURL = "http://externaldns.in-process"

// Timeouts of one listing and one apply. ExternalDNS' providers page
// through zones and split batches under their own rate limits and
// retries (Route53: 5 requests per second), so these are generous; the
// applier's --provider-timeout and context still bound every call
// (inProcess ends each request with its context).
const (
	listTimeout  = 5 * time.Minute
	applyTimeout = 15 * time.Minute
)

// New builds the ExternalDNS provider that args (an ExternalDNS command
// line: --provider=aws --aws-zone-type=public ...) select, with
// ExternalDNS' own Config and constructors, and returns it as a zonestream
// provider. Its zones are those of the provider's domain filter (AWS,
// Google, Azure list their hosted zones), else --domain-filter's.
func New(ctx context.Context, args []string, opts provider.Options, with ...Option) (*webhook.Provider, error) {
	cfg, err := Parse(args)
	if err != nil {
		return nil, err
	}
	return FromConfig(ctx, cfg, opts, with...)
}

// FromConfig is New for an already parsed ExternalDNS Config.
func FromConfig(ctx context.Context, cfg *edns.Config, opts provider.Options, with ...Option) (*webhook.Provider, error) {
	opts = opts.WithDefaults()
	h, err := build(ctx, cfg, opts.Logger)
	if err != nil {
		return nil, err
	}
	wc := webhook.Config{URL: inProcessURL, ReadTimeout: listTimeout, WriteTimeout: applyTimeout}
	for _, o := range with {
		o(&wc)
	}
	return webhook.New(wc, opts, webhook.WithTransport(inProcess{h}))
}

// Option configures the adapter beyond ExternalDNS' command line.
type Option func(*webhook.Config)

// WithRetry sets how often, and after how long, a failed call to the
// provider is tried again (default 3 times, from 250ms), on top of the
// retries of the provider's own SDK; and, when r.Timeout is set, how long
// one call may take (default: listTimeout, applyTimeout).
func WithRetry(r provider.RetryConfig) Option {
	return func(c *webhook.Config) {
		c.Retries, c.RetryBackoff = r.Retries, r.RetryBackoff
		if r.Timeout > 0 {
			c.ReadTimeout, c.WriteTimeout = r.Timeout, r.Timeout
		}
	}
}

// build builds the provider cfg selects, with the domain filter
// ExternalDNS' controller would give it, and its handler. ExternalDNS'
// code logs through log from here on (logThroughSlog).
func build(ctx context.Context, cfg *edns.Config, log *slog.Logger) (http.Handler, error) {
	logThroughSlog(log)
	df := domainFilter(cfg)
	p, err := selectProvider(ctx, cfg, df)
	if err != nil {
		return nil, configError(err)
	}
	return newHandler(p, df, slices.Contains(zoneTextProviders, cfg.Provider), log.With("provider", cfg.Provider)), nil
}
