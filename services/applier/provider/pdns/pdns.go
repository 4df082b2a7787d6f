// Package pdns is a provider for the PowerDNS Authoritative Server, through
// its HTTP API (/api/v1): it lists zones and RRsets with GET and writes
// every change of a plan in one PATCH, which PowerDNS applies atomically.
//
// The API has no conditional writes, so the plan's preconditions are checked
// by reading the affected RRsets just before the PATCH: a plan computed from
// stale observations is rejected with provider.ErrStale and nothing is
// written. The zone's serial, read with them and again right before the
// PATCH, makes an edit by someone else in between stale too (guard.go);
// only the last round trip before the PATCH is left (see README.md).
package pdns

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Provider talks to one PowerDNS server's HTTP API.
type Provider struct {
	cfg        Config
	base       string // <server>/api/v1/servers/<id>
	client     *http.Client
	defaultTTL int64
	log        *slog.Logger
	// noFilter is set once the server answered a GET with rrset_name with
	// RRsets of other names (a version without the filter).
	noFilter atomic.Bool
	// sizes is how many RRsets each zone had at its last listing: it
	// decides between reading names one by one and reading the zone.
	sizes sync.Map // zone -> int

	listed    listings     // each zone's last download, by serial
	downloads atomic.Int64 // full downloads of a zone, for tests
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider.
func New(cfg Config, opts provider.Options) (*Provider, error) {
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.SkipTLSVerify {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // --pdns-skip-tls-verify
	}
	p := &Provider{
		cfg:        cfg,
		base:       strings.TrimRight(cfg.Server, "/") + "/api/v1/servers/" + url.PathEscape(cfg.ServerID),
		client:     &http.Client{Transport: tr, Timeout: cfg.Timeout},
		defaultTTL: opts.DefaultTTL,
		log:        opts.Logger,
	}
	return p, nil
}

// Zones lists the server's zones (GET /zones), every kind.
func (p *Provider) Zones(ctx context.Context) ([]string, error) {
	var zs []zoneJSON
	if err := p.do(ctx, http.MethodGet, "/zones", nil, nil, &zs); err != nil {
		return nil, fmt.Errorf("pdns: list zones: %w", err)
	}
	out := make([]string, 0, len(zs))
	for _, z := range zs {
		if n := events.NormalizeName(z.Name); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Records lists zone (GET /zones/<id>): every RRset with an enabled record
// except the SOA, one endpoint per name and type; between full downloads
// from the provider's copy while the zone's serial says it is current
// (listing.go).
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if eps, ok := p.unchanged(ctx, zone); ok {
		return eps, nil
	}
	eps, _, err := p.download(ctx, zone)
	return eps, err
}

// download reads the whole zone and keeps it as the provider's copy; it
// returns the zone's serial too.
func (p *Provider) download(ctx context.Context, zone string) ([]events.Endpoint, uint32, error) {
	p.downloads.Add(1)
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), nil, nil, &z); err != nil {
		return nil, 0, fmt.Errorf("pdns: list zone %s: %w", zone, err)
	}
	p.sizes.Store(zone, len(z.RRsets))
	eps := endpointsOf(zone, z.RRsets)
	p.keep(zone, z, eps)
	return eps, z.Serial, nil
}

// RecordsAt reads a few names one by one (GET with rrset_name), more from
// the provider's copy of the zone while it is current, else with one GET
// of the zone, and returns every RRset at names.
func (p *Provider) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, _, err := p.recordsAt(ctx, zone, names)
	return eps, err
}

// recordsAt is RecordsAt, with the zone's serials its reads saw.
func (p *Provider) recordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, readSerials, error) {
	var seen readSerials
	if !p.byName(zone, len(names)) {
		if l := p.current(ctx, zone); l != nil {
			seen.saw(l.serial)
			return provider.CloneEndpoints(provider.AtNames(l.eps, names)), seen, nil
		}
		eps, serial, err := p.download(ctx, zone)
		seen.saw(serial)
		return provider.AtNames(eps, names), seen, err
	}
	var rrsets []rrsetJSON
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		var z zoneJSON
		if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrset_name": {fqdn(n)}}, nil, &z); err != nil {
			return nil, seen, fmt.Errorf("pdns: read %s in zone %s: %w", n, zone, err)
		}
		seen.saw(z.Serial)
		for _, rs := range z.RRsets {
			if fqdn(rs.Name) != fqdn(n) && !p.noFilter.Swap(true) {
				p.log.Info("pdns: the server does not filter by rrset_name; reading whole zones instead")
			}
		}
		rrsets = append(rrsets, z.RRsets...)
	}
	// A server that ignores rrset_name answered whole zones: keeping only
	// names is right either way.
	return provider.AtNames(endpointsOf(zone, rrsets), names), seen, nil
}

// Apply and RecordsAt read a few names one by one (GET with rrset_name),
// more with one GET of the whole zone. Measured with BenchmarkApply on
// PowerDNS 4.7 (SQLite), one GET of a zone of 10,000 RRsets costs about as
// much as 60 GETs by name: reading by name pays while names are fewer than
// the zone's RRsets (at its last listing) over rrsetsPerGet, and at most
// filterNames; a zone not listed yet is read by name up to smallFilter.
const (
	filterNames  = 64
	smallFilter  = 8
	rrsetsPerGet = 150
)

// byName says whether n names of zone are read one by one.
func (p *Provider) byName(zone string, n int) bool {
	if p.noFilter.Load() || n > filterNames {
		return false
	}
	size, ok := p.sizes.Load(zone)
	if !ok {
		return n <= smallFilter
	}
	return n*rrsetsPerGet <= size.(int) || n <= 1
}

// statusError is an HTTP answer other than 2xx.
type statusError struct {
	method, path string
	code         int
	msg          string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d %s: %s", e.method, e.path, e.code, http.StatusText(e.code), e.msg)
}

// do sends one API request, retrying transient failures (connection
// errors, timeouts, 5xx, 429) with exponential backoff and jitter.
func (p *Provider) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return provider.Permanent(err)
		}
	}
	return provider.Retry(ctx, p.cfg.Retries, p.cfg.RetryBackoff,
		func(attempt int, wait time.Duration, last error) {
			p.log.Warn("pdns: retrying request", "method", method, "path", path, "attempt", attempt, "after", wait, "err", last)
		},
		func() error { return p.once(ctx, method, path, query, body, out) })
}

func (p *Provider) once(ctx context.Context, method, path string, query url.Values, body []byte, out any) error {
	u := p.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return provider.Permanent(err)
	}
	req.Header.Set("X-API-Key", p.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var unknownCA x509.UnknownAuthorityError
		var hostname x509.HostnameError
		var verify *tls.CertificateVerificationError
		if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &verify) {
			return provider.Permanentf("%w (or set --pdns-skip-tls-verify)", err)
		}
		return err // connection refused, timeout, reset: transient
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		if out == nil || resp.StatusCode == http.StatusNoContent {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	se := &statusError{method: method, path: path, code: resp.StatusCode, msg: strings.TrimSpace(string(raw))}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		se.msg = e.Error
	}
	switch c := resp.StatusCode; {
	case c == http.StatusTooManyRequests || c >= 500:
		return se
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		return provider.Permanentf("%w (check --pdns-api-key, and the server's api-key and webserver-allow-from)", se)
	case c == http.StatusNotFound:
		return provider.Permanentf("%w (no such zone, or check --pdns-server-id)", se)
	}
	return provider.Permanent(se) // 400, 422: a record PowerDNS refuses
}
