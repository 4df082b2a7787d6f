package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Provider drives an ExternalDNS webhook provider.
type Provider struct {
	cfg        Config
	base       *url.URL
	client     *http.Client
	defaultTTL int64
	log        *slog.Logger

	mu     sync.Mutex
	filter *DomainFilter // negotiated at the last Zones
	zones  []string
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider. It does not contact the webhook: negotiation
// happens at every Zones (each full listing of the applier), so a webhook
// that starts later, or changes its domain filter, is picked up.
func New(cfg Config, opts provider.Options, with ...Option) (*Provider, error) {
	registerMetrics()
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := url.Parse(cfg.URL)
	p := &Provider{
		cfg:        cfg,
		base:       base,
		client:     &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		defaultTTL: opts.DefaultTTL,
		log:        opts.Logger,
	}
	for _, o := range with {
		o(p)
	}
	return p, nil
}

// Option configures a Provider beyond its flags.
type Option func(*Provider)

// WithTransport sends the protocol's requests through rt instead of the
// network, e.g. to a handler in the same process.
func WithTransport(rt http.RoundTripper) Option {
	return func(p *Provider) { p.client = &http.Client{Transport: rt} }
}

// DomainFilter negotiates with the webhook (GET /) and returns its domain
// filter. The answer must be 2xx with Content-Type
// application/external.dns.webhook+json;version=1.
func (p *Provider) DomainFilter(ctx context.Context) (*DomainFilter, error) {
	var raw json.RawMessage
	h, err := p.do(ctx, http.MethodGet, "", nil, p.cfg.ReadTimeout, &raw, nil)
	if err != nil {
		return nil, fmt.Errorf("webhook: negotiate: %w", err)
	}
	if ct := h.Get("Content-Type"); !checkMediaType(ct) {
		return nil, provider.Permanentf("webhook: negotiate: the webhook answered Content-Type %q, want %q (not an ExternalDNS webhook provider, or another version of the protocol)", ct, MediaType)
	}
	f := &DomainFilter{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, f); err != nil {
			return nil, provider.Permanentf("webhook: negotiate: decoding the domain filter: %w", err)
		}
	}
	return f, nil
}

// Zones negotiates the domain filter and returns --webhook-zone, or else
// the filter's include list. A filter without one (empty: everything, or
// regular expressions) and no --webhook-zone is a permanent error: the
// protocol has no zones, and "everything" is not a zone list.
func (p *Provider) Zones(ctx context.Context) ([]string, error) {
	f, err := p.DomainFilter(ctx)
	if err != nil {
		return nil, err
	}
	src := []string(p.cfg.Zones)
	if len(src) == 0 {
		src = f.Include
	}
	var zones []string
	for _, z := range src {
		if n := zoneName(z); n != "" {
			zones = append(zones, n)
		}
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)
	if len(zones) == 0 {
		return nil, provider.Permanentf("webhook: the webhook's domain filter lists no domains (%s); name the zones with --webhook-zone", describe(f))
	}
	for _, z := range zones {
		if !f.Match(z) && !f.Match("x."+z) {
			p.log.Warn("webhook: --webhook-zone is outside the webhook's domain filter", "zone", z, "filter", describe(f))
		}
	}
	p.mu.Lock()
	p.filter, p.zones = f, zones
	p.mu.Unlock()
	return slices.Clone(zones), nil
}

func describe(f *DomainFilter) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// negotiated returns the filter and zones of the last negotiation,
// negotiating if there was none.
func (p *Provider) negotiated(ctx context.Context) (*DomainFilter, []string, error) {
	p.mu.Lock()
	f, zones := p.filter, p.zones
	p.mu.Unlock()
	if f != nil {
		return f, zones, nil
	}
	zones, err := p.Zones(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.filter, zones, nil
}

// list is GET /records: every endpoint, as the webhook wrote it.
func (p *Provider) list(ctx context.Context, retry bool) ([]events.Endpoint, error) {
	var eps []events.Endpoint
	var err error
	if retry {
		_, err = p.do(ctx, http.MethodGet, PathRecords, nil, p.cfg.ReadTimeout, &eps, nil)
	} else {
		_, err = p.once(ctx, http.MethodGet, PathRecords, nil, p.cfg.ReadTimeout, &eps)
	}
	if counted(recordsRequests, recordsErrors, err) != nil {
		return nil, fmt.Errorf("webhook: list records: %w", err)
	}
	return eps, nil
}

// listing is what the webhook holds: per RRset, the endpoints as listed
// (raw) and one merged, normalized endpoint (view). A webhook may list an
// RRset as several endpoints (one per target); zonestream sees one.
type listing struct {
	raw  map[events.RRsetKey][]events.Endpoint
	view map[events.RRsetKey]events.Endpoint
	keys []events.RRsetKey
}

func newListing(eps []events.Endpoint) *listing {
	l := &listing{raw: map[events.RRsetKey][]events.Endpoint{}, view: map[events.RRsetKey]events.Endpoint{}}
	for _, ep := range eps {
		k := provider.KeyOf(ep)
		if k.DNSName == "" || k.RecordType == "" {
			continue
		}
		l.raw[k] = append(l.raw[k], ep)
		n := provider.NormalizeEndpoint(ep)
		if have, ok := l.view[k]; ok {
			have.Targets = append(have.Targets, n.Targets...)
			l.view[k] = provider.NormalizeEndpoint(have)
			continue
		}
		l.view[k] = n
		l.keys = append(l.keys, k)
	}
	return l
}

// Records lists the webhook (GET /records) and returns the RRsets of zone:
// names in zone and in no longer zone of Zones, admitted by the domain
// filter, one endpoint per name, type and set identifier.
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	f, zones, err := p.negotiated(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(zones, zone) {
		return nil, provider.Permanentf("webhook: %q is not one of the zones %v", zone, zones)
	}
	eps, err := p.list(ctx, true)
	if err != nil {
		return nil, err
	}
	l := newListing(eps)
	out := make([]events.Endpoint, 0, len(l.keys))
	for _, k := range l.keys {
		if k.RecordType == "SOA" {
			continue // a webhook may list it (ExternalDNS' pdns does); no provider's Records has it
		}
		if provider.ZoneOf(k.DNSName, zones) == zone && f.Match(k.DNSName) {
			out = append(out, l.view[k])
		}
	}
	events.SortEndpoints(out)
	return out, nil
}

// statusError is an HTTP answer other than 2xx.
type statusError struct {
	method, url string
	code        int
	reason, msg string
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d %s", e.method, e.url, e.code, http.StatusText(e.code))
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

// do sends one request, retrying transient failures (connection errors,
// timeouts, 5xx, 429) with exponential backoff and jitter. Before a
// retry, again (when set) says whether the request is already done, or
// must not be sent again (its error).
func (p *Provider) do(ctx context.Context, method, path string, body []byte, timeout time.Duration, out any, again func(context.Context) (bool, error)) (http.Header, error) {
	var h http.Header
	first := true
	err := provider.Retry(ctx, p.cfg.Retries, p.cfg.RetryBackoff,
		func(attempt int, wait time.Duration, last error) {
			p.log.Warn("webhook: retrying request", "method", method, "path", path, "attempt", attempt, "after", wait, "err", last)
		},
		func() error {
			if !first && again != nil {
				if done, err := again(ctx); done || err != nil {
					return err
				}
			}
			first = false
			var err error
			h, err = p.once(ctx, method, path, body, timeout, out)
			return err
		})
	return h, err
}

func (p *Provider) once(ctx context.Context, method, path string, body []byte, timeout time.Duration, out any) (http.Header, error) {
	target := p.base
	if path != "" {
		target = p.base.JoinPath(path)
	}
	// An error names the URL without its password: it becomes a result
	// on the bus, read in every cluster.
	u, shown := target.String(), target.Redacted()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, provider.Permanent(err)
	}
	req.Header.Set("Accept", MediaType)
	if body != nil {
		req.Header.Set("Content-Type", MediaType)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err // connection refused, timeout, reset: transient
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		if out == nil || resp.StatusCode == http.StatusNoContent {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			return resp.Header, nil
		}
		body := io.Reader(resp.Body)
		limited := &io.LimitedReader{R: resp.Body, N: p.cfg.MaxBodySize + 1}
		if p.cfg.MaxBodySize > 0 {
			body = limited
		}
		err := json.NewDecoder(body).Decode(out)
		if p.cfg.MaxBodySize > 0 && limited.N <= 0 {
			return nil, provider.Permanentf("%s %s: the answer is larger than --webhook-provider-max-body-size (%d bytes)", method, shown, p.cfg.MaxBodySize)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: decoding the answer: %w", method, shown, err)
		}
		return resp.Header, nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	se := &statusError{method: method, url: shown, code: resp.StatusCode, msg: strings.TrimSpace(string(raw))}
	var eb errorBody
	if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
		se.msg, se.reason = eb.Error, eb.Reason
	}
	switch c := resp.StatusCode; {
	case se.reason == ReasonStale:
		return nil, fmt.Errorf("%w: %w", provider.ErrStale, se)
	case se.reason == ReasonRejected:
		return nil, provider.Permanent(se)
	case c == http.StatusTooManyRequests || c >= 500:
		return nil, se
	}
	return nil, provider.Permanent(se) // 4xx (and a 3xx not followed)
}
