// Package pdns is a provider for the PowerDNS Authoritative Server, through
// its HTTP API (/api/v1): it lists zones and RRsets with GET and writes
// every change of a plan in one PATCH, which PowerDNS applies atomically.
//
// The API has no conditional writes, so the plan's preconditions are checked
// by reading the affected RRsets just before the PATCH: a plan computed from
// stale observations is rejected with provider.ErrStale and nothing is
// written. A change made by someone else between that read and the PATCH is
// not detected (see README.md).
package pdns

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier/provider"
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

	// Timeout bounds one HTTP request (default 10s).
	Timeout time.Duration
	// Retries is how often a transient failure of a request is retried
	// (default 3; negative: none).
	Retries int
	// RetryBackoff is the first retry's delay, doubled each time, with
	// jitter (default 250ms).
	RetryBackoff time.Duration
}

// RegisterFlags registers the --pdns-* flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Server, "pdns-server", "http://localhost:8081", "when using the PowerDNS provider, the URL of its HTTP API (webserver)")
	service.SecretVar(fs, &c.APIKey, "pdns-api-key", "when using the PowerDNS provider, the API key (default: $"+APIKeyEnv+")")
	fs.StringVar(&c.ServerID, "pdns-server-id", "localhost", "when using the PowerDNS provider, the server id in the API path (/api/v1/servers/<id>)")
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
	}
	if c.APIKey == "" {
		return errors.New("pdns: --pdns-api-key (or $" + APIKeyEnv + ") is required")
	}
	if c.ServerID == "" {
		c.ServerID = "localhost"
	}
	provider.RetryDefaults(&c.Timeout, &c.Retries, &c.RetryBackoff)
	return nil
}

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

// The API's JSON.
type zoneJSON struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	Kind   string      `json:"kind,omitempty"`
	RRsets []rrsetJSON `json:"rrsets,omitempty"`
}

type rrsetJSON struct {
	Name       string       `json:"name"`
	Type       string       `json:"type"`
	TTL        int64        `json:"ttl,omitempty"`
	ChangeType string       `json:"changetype,omitempty"`
	Records    []recordJSON `json:"records,omitempty"`
}

type recordJSON struct {
	Content  string `json:"content"`
	Disabled bool   `json:"disabled"`
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

// skipped are the types Records does not report: the SOA, and what DNSSEC
// signing adds.
var skipped = []string{"SOA", "RRSIG", "NSEC", "NSEC3", "NSEC3PARAM"}

// Records lists zone (GET /zones/<id>): every RRset with an enabled record
// except the SOA, one endpoint per name and type.
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), nil, nil, &z); err != nil {
		return nil, fmt.Errorf("pdns: list zone %s: %w", zone, err)
	}
	p.sizes.Store(zone, len(z.RRsets))
	return endpointsOf(zone, z.RRsets), nil
}

// RecordsAt reads a few names one by one (GET with rrset_name), more with
// one GET of the zone, and returns every RRset at names.
func (p *Provider) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	if !p.byName(zone, len(names)) {
		eps, err := p.Records(ctx, zone)
		return provider.AtNames(eps, names), err
	}
	var rrsets []rrsetJSON
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		var z zoneJSON
		if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrset_name": {fqdn(n)}}, nil, &z); err != nil {
			return nil, fmt.Errorf("pdns: read %s in zone %s: %w", n, zone, err)
		}
		rrsets = append(rrsets, z.RRsets...)
	}
	// A server that ignores rrset_name answered whole zones: keeping only
	// names is right either way.
	return provider.AtNames(endpointsOf(zone, rrsets), names), nil
}

// endpointsOf turns rrsets of zone into endpoints, one per name and type,
// leaving out disabled records, the skipped types and names outside zone.
func endpointsOf(zone string, rrsets []rrsetJSON) []events.Endpoint {
	sets := make(map[events.RRsetKey]*events.Endpoint)
	var keys []events.RRsetKey
	for _, rs := range rrsets {
		typ := strings.ToUpper(rs.Type)
		name := events.NormalizeName(rs.Name)
		if slices.Contains(skipped, typ) || !provider.InZone(name, zone) {
			continue
		}
		k := events.RRsetKey{DNSName: name, RecordType: typ}
		for _, r := range rs.Records {
			if r.Disabled {
				continue
			}
			ep, ok := sets[k]
			if !ok {
				ep = &events.Endpoint{DNSName: name, RecordType: typ, RecordTTL: rs.TTL}
				sets[k] = ep
				keys = append(keys, k)
			}
			ep.Targets = append(ep.Targets, Target(typ, r.Content))
		}
	}
	eps := make([]events.Endpoint, 0, len(keys))
	for _, k := range keys {
		eps = append(eps, provider.NormalizeEndpoint(*sets[k]))
	}
	events.SortEndpoints(eps)
	return eps
}

// Target turns a record's PowerDNS content into an endpoint target: the IP
// for A/AAAA, the name without trailing dot for CNAME/NS/PTR/DNAME, the
// concatenated, unquoted character-strings for TXT (and SPF), the content
// itself otherwise.
func Target(rtype, content string) string {
	content = strings.TrimSpace(content)
	switch rtype = strings.ToUpper(rtype); {
	case rtype == "A" || rtype == "AAAA":
		if a, err := netip.ParseAddr(content); err == nil {
			return a.String()
		}
	case slices.Contains(provider.NameTargetTypes, rtype):
		return events.NormalizeName(content)
	case rtype == "TXT" || rtype == "SPF":
		return ParseTXT(content)
	}
	return content
}

// Content turns an endpoint target into PowerDNS content, the form the API
// takes and gives back: canonical IPs, absolute names with a trailing dot,
// TXT as quoted character-strings of at most 255 bytes, escaped. A target
// PowerDNS would not take (a bad IP) is passed on for it to reject.
func Content(rtype, target string) string {
	switch rtype = strings.ToUpper(rtype); {
	case rtype == "A" || rtype == "AAAA":
		if a, err := netip.ParseAddr(strings.TrimSpace(target)); err == nil {
			return a.String()
		}
		return target
	case slices.Contains(provider.NameTargetTypes, rtype):
		return fqdn(target)
	case rtype == "TXT" || rtype == "SPF":
		return QuoteTXT(target)
	case rtype == "MX" || rtype == "SRV":
		// The target name is the last field; PowerDNS wants it absolute.
		f := strings.Fields(target)
		if len(f) > 1 {
			f[len(f)-1] = fqdn(f[len(f)-1])
			return strings.Join(f, " ")
		}
	}
	return strings.TrimSpace(target)
}

func fqdn(name string) string { return events.NormalizeName(name) + "." }

// QuoteTXT writes a TXT value as PowerDNS content: character-strings of at
// most 255 bytes, each in double quotes, '"' and '\' escaped with a
// backslash and bytes outside printable ASCII as \DDD. (miekg/dns keeps TXT
// strings already escaped, so it cannot do this for a raw value.)
func QuoteTXT(v string) string {
	if v == "" {
		return `""`
	}
	var b strings.Builder
	for len(v) > 0 {
		n := min(255, len(v))
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for i := 0; i < n; i++ {
			switch c := v[i]; {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < ' ' || c > '~':
				fmt.Fprintf(&b, "\\%03d", c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		v = v[n:]
	}
	return b.String()
}

// ParseTXT reads TXT content in presentation form — character-strings,
// quoted or not, separated by blanks, with \X and \DDD escapes — and
// returns them concatenated, unescaped.
func ParseTXT(content string) string {
	var b strings.Builder
	s := content
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		quoted := c == '"'
		if quoted {
			i++
		}
		for i < len(s) {
			c = s[i]
			if quoted && c == '"' {
				i++
				break
			}
			if !quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				break
			}
			if c == '\\' && i+1 < len(s) {
				if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
					if v, err := strconv.Atoi(s[i+1 : i+4]); err == nil && v < 256 {
						b.WriteByte(byte(v))
						i += 4
						continue
					}
				}
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// contents is the sorted, de-duplicated PowerDNS content of ep's targets:
// the form preconditions are compared in.
func contents(rtype string, targets []string) []string {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		out = append(out, Content(rtype, t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *Provider) ttl(ep events.Endpoint) int64 {
	if ep.RecordTTL > 0 {
		return min(ep.RecordTTL, 1<<31-1)
	}
	return p.defaultTTL
}

// rrKey names an RRset the way PowerDNS does: absolute name, type.
type rrKey struct{ name, rtype string }

func keyOf(k events.RRsetKey) rrKey {
	return rrKey{fqdn(k.DNSName), strings.ToUpper(k.RecordType)}
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

// Apply checks every change's precondition against the RRsets PowerDNS
// holds now, then writes all changes in one PATCH (REPLACE for a new
// RRset, DELETE for none), which PowerDNS applies entirely or not at all.
// When a precondition fails, nothing is written and the error wraps
// provider.ErrStale.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	var names []string
	for _, c := range changes {
		if n := fqdn(c.Key().DNSName); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	state, err := p.current(ctx, zone, names)
	if err != nil {
		return err
	}

	// Apply the changes in order to what PowerDNS holds, checking each
	// precondition on the way; the PATCH then writes the final state of
	// every RRset touched (PowerDNS takes one entry per RRset).
	var order []rrKey
	final := map[rrKey]*events.Endpoint{}
	for _, c := range changes {
		k := keyOf(c.Key())
		have := state[k]
		if c.Old == nil {
			if len(have) > 0 {
				return fmt.Errorf("%w: pdns: %s: %s %s exists (%s)", provider.ErrStale, c, k.name, k.rtype, strings.Join(have, ", "))
			}
		} else if want := contents(k.rtype, c.Old.Targets); !slices.Equal(want, have) {
			return fmt.Errorf("%w: pdns: %s: %s %s holds [%s], the plan expected [%s]", provider.ErrStale, c, k.name, k.rtype,
				strings.Join(have, ", "), strings.Join(want, ", "))
		}
		if c.New != nil {
			state[k] = contents(k.rtype, c.New.Targets)
		} else {
			delete(state, k)
		}
		if _, ok := final[k]; !ok {
			order = append(order, k)
		}
		final[k] = c.New
	}
	patch := struct {
		RRsets []rrsetJSON `json:"rrsets"`
	}{}
	for _, k := range order {
		rs := rrsetJSON{Name: k.name, Type: k.rtype, ChangeType: "DELETE"}
		if ep := final[k]; ep != nil {
			rs.ChangeType, rs.TTL = "REPLACE", p.ttl(*ep)
			for _, c := range contents(k.rtype, ep.Targets) {
				rs.Records = append(rs.Records, recordJSON{Content: c})
			}
		}
		patch.RRsets = append(patch.RRsets, rs)
	}
	// REPLACE and DELETE state the RRset's final content, so a PATCH
	// retried after a lost answer does no harm.
	if err := p.do(ctx, http.MethodPatch, zonePath(zone), nil, patch, nil); err != nil {
		return fmt.Errorf("pdns: patch zone %s (%d changes): %w", zone, len(changes), err)
	}
	return nil
}

// current reads the enabled records of every RRset at names (absolute),
// as sorted PowerDNS content per RRset. A few names are read one by one
// (rrset_name, PowerDNS 4.7 and later), more with one GET of the zone.
func (p *Provider) current(ctx context.Context, zone string, names []string) (map[rrKey][]string, error) {
	state := map[rrKey][]string{}
	add := func(z zoneJSON, only string) {
		for _, rs := range z.RRsets {
			name, typ := fqdn(rs.Name), strings.ToUpper(rs.Type)
			if only != "" && name != only || !slices.Contains(names, name) {
				continue
			}
			var cs []string
			for _, r := range rs.Records {
				if !r.Disabled {
					// Through Target and back: the content PowerDNS holds
					// in the form Content writes.
					cs = append(cs, Content(typ, Target(typ, r.Content)))
				}
			}
			if len(cs) > 0 {
				k := rrKey{name, typ}
				state[k] = append(state[k], cs...)
				slices.Sort(state[k])
				state[k] = slices.Compact(state[k])
			}
		}
	}
	if p.byName(zone, len(names)) {
		for _, n := range names {
			var z zoneJSON
			if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrset_name": {n}}, nil, &z); err != nil {
				return nil, fmt.Errorf("pdns: read %s in zone %s: %w", n, zone, err)
			}
			filtered := true
			for _, rs := range z.RRsets {
				if fqdn(rs.Name) != n {
					filtered = false
				}
			}
			if !filtered {
				// This server ignores rrset_name: z is the whole zone.
				p.noFilter.Store(true)
				p.log.Info("pdns: the server does not filter by rrset_name; reading whole zones before a change")
				clear(state)
				add(z, "")
				return state, nil
			}
			add(z, n)
		}
		return state, nil
	}
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), nil, nil, &z); err != nil {
		return nil, fmt.Errorf("pdns: read zone %s: %w", zone, err)
	}
	add(z, "")
	return state, nil
}

// ZoneID is the API's id of a zone: the absolute name, characters other
// than letters, digits, '.' and '-' written =XX (as PowerDNS does).
func ZoneID(zone string) string {
	name := fqdn(zone)
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	if b.String() == "." {
		return "=2E"
	}
	return b.String()
}

func zonePath(zone string) string { return "/zones/" + url.PathEscape(ZoneID(zone)) }

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
