package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// DefaultURL is where ExternalDNS expects its webhook provider: a sidecar
// on the loopback interface.
const DefaultURL = "http://localhost:8888"

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
	// Zones are the zones the applier manages through the webhook. Empty:
	// the include list of the domain filter the webhook negotiates.
	Zones service.StringList

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
		return fmt.Errorf("webhook: --webhook-provider-url %q: want http://host:port or https://host:port", c.URL)
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	for _, z := range c.Zones {
		if zoneName(z) == "" {
			return errors.New("webhook: empty --webhook-zone")
		}
	}
	if c.Retries < 0 {
		c.Retries = 0
	} else if c.Retries == 0 {
		c.Retries = 3
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 250 * time.Millisecond
	}
	return nil
}

// zoneName turns a domain filter entry into a zone name (".example.org",
// "subdomains only" in a filter, is the zone example.org).
func zoneName(s string) string {
	return events.NormalizeName(strings.TrimPrefix(strings.TrimSpace(s), "."))
}

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
func New(cfg Config, opts provider.Options) (*Provider, error) {
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
	return p, nil
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

// state returns the filter and zones of the last negotiation, negotiating
// if there was none.
func (p *Provider) state(ctx context.Context) (*DomainFilter, []string, error) {
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
	if err != nil {
		return nil, fmt.Errorf("webhook: list records: %w", err)
	}
	return eps, nil
}

// key is the normalized RRset of ep.
func key(ep events.Endpoint) events.RRsetKey {
	return events.RRsetKey{
		DNSName:       events.NormalizeName(ep.DNSName),
		RecordType:    strings.ToUpper(strings.TrimSpace(ep.RecordType)),
		SetIdentifier: ep.SetIdentifier,
	}
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
		k := key(ep)
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
	f, zones, err := p.state(ctx)
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
		if ZoneOf(k.DNSName, zones) == zone && f.Match(k.DNSName) {
			out = append(out, l.view[k])
		}
	}
	events.SortEndpoints(out)
	return out, nil
}

// touched is one RRset a batch changes: what the webhook listed for it
// before (orig, as listed; none when absent) and what it must hold after
// the whole batch (final; nil: nothing).
type touched struct {
	key   events.RRsetKey
	orig  []events.Endpoint
	final *events.Endpoint
}

// Apply checks every change's Old against a fresh GET /records (the
// protocol has no preconditions), then POSTs the batch to /records as
// ExternalDNS' Changes. A change whose Old is not what the webhook holds
// (targets; TTLs are not compared; nil: no such RRset) fails the batch
// with provider.ErrStale before anything is sent. See README.md for the
// window between the check and the POST.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	f, _, err := p.state(ctx)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if n := c.Key().DNSName; !f.Match(n) {
			return provider.Permanentf("webhook: change %s: %s is outside the webhook's domain filter %s", c, n, describe(f))
		}
	}
	eps, err := p.list(ctx, true)
	if err != nil {
		return err
	}
	before := newListing(eps)

	// Play the changes in order against the listing, checking each
	// precondition; the POST states each RRset's final content once.
	state := map[events.RRsetKey]events.Endpoint{}
	for k, v := range before.view {
		state[k] = v
	}
	var order []*touched
	byKey := map[events.RRsetKey]*touched{}
	for _, c := range changes {
		var k events.RRsetKey
		if c.Old != nil {
			k = key(*c.Old)
		} else {
			k = key(*c.New)
		}
		have, exists := state[k]
		switch {
		case c.Old == nil && exists:
			return fmt.Errorf("%w: webhook: %s: %s %s exists (%s)", provider.ErrStale, c, k.DNSName, k.RecordType, strings.Join(have.Targets, ", "))
		case c.Old != nil && !exists:
			return fmt.Errorf("%w: webhook: %s: %s %s does not exist", provider.ErrStale, c, k.DNSName, k.RecordType)
		case c.Old != nil && !provider.SameTargets(*c.Old, have):
			return fmt.Errorf("%w: webhook: %s: %s %s holds [%s], the plan expected [%s]", provider.ErrStale, c, k.DNSName, k.RecordType,
				strings.Join(have.Targets, ", "), strings.Join(provider.NormalizeEndpoint(*c.Old).Targets, ", "))
		}
		if c.New != nil {
			state[k] = provider.NormalizeEndpoint(*c.New)
		} else {
			delete(state, k)
		}
		t, ok := byKey[k]
		if !ok {
			t = &touched{key: k, orig: before.raw[k]}
			byKey[k] = t
			order = append(order, t)
		}
		t.final = c.New
	}

	batch := p.batch(order)
	if batch.Len() == 0 {
		return nil
	}
	body, err := json.Marshal(batch)
	if err != nil {
		return provider.Permanent(err)
	}
	// Before a retry, look again: a POST whose answer was lost may have
	// been applied; one that was not is sent again only while the
	// preconditions still hold.
	again := func(ctx context.Context) (bool, error) {
		eps, err := p.list(ctx, false)
		if err != nil {
			return false, err
		}
		now := newListing(eps)
		allFinal, allOrig := true, true
		for _, t := range order {
			have, exists := now.view[t.key]
			if t.final == nil && exists || t.final != nil && (!exists || !provider.SameTargets(*t.final, have)) {
				allFinal = false
			}
			was, existed := before.view[t.key]
			if existed != exists || exists && !provider.SameTargets(was, have) {
				allOrig = false
			}
		}
		switch {
		case allFinal:
			p.log.Info("webhook: the changes of a POST whose answer was lost are in place", "zone", zone)
			return true, nil
		case allOrig:
			return false, nil
		}
		return false, fmt.Errorf("%w: webhook: after a failed POST the records are neither as before nor as planned (partly applied, or changed by someone else)", provider.ErrStale)
	}
	if _, err := p.do(ctx, http.MethodPost, PathRecords, body, p.cfg.WriteTimeout, nil, again); err != nil {
		return fmt.Errorf("webhook: apply %d change(s) to zone %s: %w", len(changes), zone, err)
	}
	return nil
}

// batch turns the touched RRsets into ExternalDNS' Changes. UpdateOld and
// Delete carry the endpoints exactly as the webhook listed them (labels,
// TTL, provider-specific properties), since webhooks look records up by
// them. An RRset the webhook listed as several endpoints is replaced by
// deleting them all and creating the new one.
func (p *Provider) batch(order []*touched) Changes {
	var ch Changes
	for _, t := range order {
		switch {
		case len(t.orig) == 0 && t.final == nil:
			// created and deleted within the batch: nothing to send
		case len(t.orig) == 0:
			ch.Create = append(ch.Create, p.outgoing(*t.final, nil))
		case t.final == nil:
			ch.Delete = append(ch.Delete, t.orig...)
		case len(t.orig) == 1:
			ch.UpdateOld = append(ch.UpdateOld, t.orig[0])
			ch.UpdateNew = append(ch.UpdateNew, p.outgoing(*t.final, &t.orig[0]))
		default:
			ch.Delete = append(ch.Delete, t.orig...)
			ch.Create = append(ch.Create, p.outgoing(*t.final, nil))
		}
	}
	return ch
}

// outgoing is the endpoint sent for a new RRset content: normalized, with
// a TTL (the endpoint's; else, for an update, the record's; else
// --default-ttl) and, when it has none, the labels of the record it
// replaces (as ExternalDNS' plan keeps the owner label on updates).
func (p *Provider) outgoing(ep events.Endpoint, old *events.Endpoint) events.Endpoint {
	ep = provider.NormalizeEndpoint(ep)
	if ep.RecordTTL <= 0 {
		ep.RecordTTL = p.defaultTTL
		if old != nil && old.RecordTTL > 0 {
			ep.RecordTTL = old.RecordTTL
		}
	}
	if len(ep.Labels) == 0 && old != nil && len(old.Labels) > 0 {
		ep.Labels = old.Labels
	}
	return ep
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
	var last error
	for attempt := 0; attempt <= p.cfg.Retries; attempt++ {
		if attempt > 0 {
			d := p.cfg.RetryBackoff << (attempt - 1)
			d += time.Duration(rand.Int64N(int64(d)/2 + 1))
			p.log.Warn("webhook: retrying request", "method", method, "path", path, "attempt", attempt+1, "after", d, "err", last)
			select {
			case <-ctx.Done():
				return nil, errors.Join(ctx.Err(), last)
			case <-time.After(d):
			}
			if again != nil {
				done, err := again(ctx)
				switch {
				case err == nil && done:
					return nil, nil
				case errors.Is(err, provider.ErrStale) || errors.Is(err, provider.ErrPermanent):
					return nil, err
				case err != nil:
					last = err
					continue
				}
			}
		}
		h, err := p.once(ctx, method, path, body, timeout, out)
		if err == nil || errors.Is(err, provider.ErrPermanent) || errors.Is(err, provider.ErrStale) {
			return h, err
		}
		if ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		last = err
	}
	return nil, fmt.Errorf("giving up after %d attempts: %w", p.cfg.Retries+1, last)
}

func (p *Provider) once(ctx context.Context, method, path string, body []byte, timeout time.Duration, out any) (http.Header, error) {
	u := p.base.String()
	if path != "" {
		u = p.base.JoinPath(path).String()
	}
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
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("%s %s: decoding the answer: %w", method, u, err)
		}
		return resp.Header, nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	se := &statusError{method: method, url: u, code: resp.StatusCode, msg: strings.TrimSpace(string(raw))}
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
