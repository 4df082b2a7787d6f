// Package rfc2136 is a provider for any DNS server that takes RFC 2136
// dynamic updates (BIND, Knot, PowerDNS, Windows DNS): it lists zones by
// AXFR and changes them with UPDATE messages whose RFC 2136 prerequisites
// are the plan's preconditions, so the server itself rejects a stale plan.
package rfc2136

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Name is the provider's --provider value and subject token.
const Name = "rfc2136"

// Config holds the provider's flags, named as ExternalDNS' rfc2136 flags.
type Config struct {
	Host            string
	Port            int
	Zones           service.StringList
	TSIGKeyName     string
	TSIGSecret      string
	TSIGSecretAlg   string
	TSIGAXFR        bool
	Insecure        bool
	MinTTL          time.Duration
	BatchChangeSize int

	// Timeout bounds one DNS exchange (default 10s).
	Timeout time.Duration
	// Retries is how often a transient failure is retried (default 3).
	Retries int
	// RetryBackoff is the first retry's delay, doubled each time, with
	// jitter (default 250ms).
	RetryBackoff time.Duration
}

// RegisterFlags registers the --rfc2136-* flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Host, "rfc2136-host", "", "when using the RFC2136 provider, the host of the DNS server")
	fs.IntVar(&c.Port, "rfc2136-port", 0, "when using the RFC2136 provider, the port of the DNS server (0: 53)")
	fs.Var(&c.Zones, "rfc2136-zone", "when using the RFC2136 provider, a zone to manage (repeatable, or comma-separated)")
	fs.StringVar(&c.TSIGKeyName, "rfc2136-tsig-keyname", "", "when using the RFC2136 provider, the TSIG key name")
	service.SecretVar(fs, &c.TSIGSecret, "rfc2136-tsig-secret", "when using the RFC2136 provider, the TSIG secret (base64)")
	fs.StringVar(&c.TSIGSecretAlg, "rfc2136-tsig-secret-alg", "hmac-sha256", "when using the RFC2136 provider, the TSIG algorithm: hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512")
	fs.BoolVar(&c.TSIGAXFR, "rfc2136-tsig-axfr", false, "when using the RFC2136 provider, sign zone transfers (AXFR) with TSIG")
	fs.BoolVar(&c.Insecure, "rfc2136-insecure", false, "when using the RFC2136 provider, send updates without TSIG")
	fs.DurationVar(&c.MinTTL, "rfc2136-min-ttl", 0, "when using the RFC2136 provider, the lowest TTL written (records with a lower TTL get this one)")
	fs.IntVar(&c.BatchChangeSize, "rfc2136-batch-change-size", 50, "when using the RFC2136 provider, the most changes sent in one UPDATE message")
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
	if c.Host == "" {
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
	if _, ok := algorithms[alg]; !ok {
		return fmt.Errorf("rfc2136: --rfc2136-tsig-secret-alg %q: want one of hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512", c.TSIGSecretAlg)
	}
	c.TSIGSecretAlg = alg
	if !c.Insecure {
		if c.TSIGKeyName == "" || c.TSIGSecret == "" {
			return errors.New("rfc2136: --rfc2136-tsig-keyname and --rfc2136-tsig-secret are required unless --rfc2136-insecure")
		}
		if _, err := base64.StdEncoding.DecodeString(c.TSIGSecret); err != nil {
			return fmt.Errorf("rfc2136: --rfc2136-tsig-secret is not base64: %w", err)
		}
	} else if c.TSIGAXFR {
		return errors.New("rfc2136: --rfc2136-tsig-axfr needs TSIG, but --rfc2136-insecure is set")
	}
	if c.MinTTL < 0 {
		return errors.New("rfc2136: --rfc2136-min-ttl must not be negative")
	}
	if c.BatchChangeSize <= 0 {
		return fmt.Errorf("rfc2136: --rfc2136-batch-change-size must be positive, got %d", c.BatchChangeSize)
	}
	provider.RetryDefaults(&c.Timeout, &c.Retries, &c.RetryBackoff)
	return nil
}

// Provider talks RFC 2136 and AXFR to one DNS server.
type Provider struct {
	cfg        Config
	addr       string
	zones      []string
	keyName    string
	alg        string
	defaultTTL int64
	minTTL     int64
	log        *slog.Logger

	copies zoneCopies // what the last transfers brought, for IXFR
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider.
func New(cfg Config, opts provider.Options) (*Provider, error) {
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Provider{
		cfg:        cfg,
		addr:       net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)),
		defaultTTL: opts.DefaultTTL,
		minTTL:     int64(cfg.MinTTL / time.Second),
		log:        opts.Logger,
	}
	for _, z := range cfg.Zones {
		p.zones = append(p.zones, events.NormalizeName(z))
	}
	slices.Sort(p.zones)
	p.zones = slices.Compact(p.zones)
	if !cfg.Insecure {
		p.keyName = dns.CanonicalName(cfg.TSIGKeyName)
		p.alg = algorithms[cfg.TSIGSecretAlg]
	}
	return p, nil
}

// Zones returns the configured zones.
func (p *Provider) Zones(context.Context) ([]string, error) { return slices.Clone(p.zones), nil }

// managed fails permanently for a zone not in --rfc2136-zone.
func (p *Provider) managed(zone string) error {
	if !slices.Contains(p.zones, zone) {
		return provider.Permanentf("rfc2136: zone %q is not configured (--rfc2136-zone)", zone)
	}
	return nil
}

// tsig is a TSIG provider for every algorithm of --rfc2136-tsig-secret-alg,
// hmac-md5 included, which miekg/dns no longer signs with by itself.
type tsig struct{ name, secret string }

func (t tsig) mac(msg []byte, rr *dns.TSIG) ([]byte, error) {
	if dns.CanonicalName(rr.Hdr.Name) != t.name {
		return nil, dns.ErrSecret
	}
	raw, err := base64.StdEncoding.DecodeString(t.secret)
	if err != nil {
		return nil, err
	}
	var h func() hash.Hash
	switch dns.CanonicalName(rr.Algorithm) {
	case dns.HmacMD5:
		h = md5.New
	case dns.HmacSHA1:
		h = sha1.New
	case dns.HmacSHA224:
		h = sha256.New224
	case dns.HmacSHA256:
		h = sha256.New
	case dns.HmacSHA384:
		h = sha512.New384
	case dns.HmacSHA512:
		h = sha512.New
	default:
		return nil, dns.ErrKeyAlg
	}
	m := hmac.New(h, raw)
	m.Write(msg)
	return m.Sum(nil), nil
}

func (t tsig) Generate(msg []byte, rr *dns.TSIG) ([]byte, error) { return t.mac(msg, rr) }

func (t tsig) Verify(msg []byte, rr *dns.TSIG) error {
	want, err := t.mac(msg, rr)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(rr.MAC)
	if err != nil {
		return err
	}
	if !hmac.Equal(want, got) {
		return dns.ErrSig
	}
	return nil
}

func (p *Provider) sign(m *dns.Msg) {
	m.SetTsig(p.keyName, p.alg, 300, time.Now().Unix())
}

// Records lists zone by AXFR: every RRset but the SOA (and the records
// DNSSEC signing adds), one endpoint per name and type. It keeps what it
// got, for RecordsAt to bring up to date by IXFR.
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if err := p.managed(zone); err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	rrs, err := p.transfer(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: AXFR %s from %s: %w", zone, p.addr, err)
	}
	if len(rrs) == 0 {
		return nil, fmt.Errorf("rfc2136: AXFR %s from %s: empty transfer", zone, p.addr)
	}
	p.keep(zone, rrs)
	return endpointsOf(zone, rrs), nil
}

// transfer runs the zone transfer m (AXFR or IXFR) and returns every RR
// it brought, in order.
func (p *Provider) transfer(ctx context.Context, m *dns.Msg) ([]dns.RR, error) {
	tr := &dns.Transfer{DialTimeout: p.cfg.Timeout, ReadTimeout: p.cfg.Timeout, WriteTimeout: p.cfg.Timeout}
	if p.cfg.TSIGAXFR {
		p.sign(m)
		tr.TsigProvider = tsig{p.keyName, p.cfg.TSIGSecret}
	}
	type result struct {
		rrs []dns.RR
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if tr.Conn != nil {
				tr.Conn.Close()
			}
		}()
		env, err := tr.In(m, p.addr)
		if err != nil {
			done <- result{err: err}
			return
		}
		var rrs []dns.RR
		var ferr error
		for e := range env { // drained to the end so the goroutine in In ends
			if e.Error != nil && ferr == nil {
				ferr = e.Error
			}
			rrs = append(rrs, e.RR...)
		}
		done <- result{rrs, ferr}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-done:
		return res.rrs, res.err
	}
}

// endpointsOf turns RRs of zone into endpoints, one per name and type,
// leaving out the SOA, what DNSSEC signing adds and names outside zone.
func endpointsOf(zone string, rrs []dns.RR) []events.Endpoint {
	sets := make(map[events.RRsetKey]*events.Endpoint)
	var keys []events.RRsetKey
	for _, rr := range rrs {
		h := rr.Header()
		switch h.Rrtype {
		case dns.TypeSOA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3, dns.TypeNSEC3PARAM, dns.TypeTSIG:
			continue
		}
		name := events.NormalizeName(h.Name)
		if !provider.InZone(name, zone) {
			continue
		}
		k := events.RRsetKey{DNSName: name, RecordType: dns.TypeToString[h.Rrtype]}
		if k.RecordType == "" {
			k.RecordType = fmt.Sprintf("TYPE%d", h.Rrtype)
		}
		ep, ok := sets[k]
		if !ok {
			ep = &events.Endpoint{DNSName: name, RecordType: k.RecordType, RecordTTL: int64(h.Ttl)}
			sets[k] = ep
			keys = append(keys, k)
		}
		if int64(h.Ttl) < ep.RecordTTL {
			ep.RecordTTL = int64(h.Ttl)
		}
		ep.Targets = append(ep.Targets, Target(rr))
	}
	eps := make([]events.Endpoint, 0, len(keys))
	for _, k := range keys {
		eps = append(eps, provider.NormalizeEndpoint(*sets[k]))
	}
	events.SortEndpoints(eps)
	return eps
}

// Target renders an RR's data as an endpoint target: the IP for A/AAAA,
// the normalized name for CNAME/NS/PTR/DNAME, the concatenated unescaped
// character-strings for TXT, miekg's presentation otherwise.
func Target(rr dns.RR) string {
	switch r := rr.(type) {
	case *dns.A:
		return r.A.String()
	case *dns.AAAA:
		return r.AAAA.String()
	case *dns.CNAME:
		return events.NormalizeName(r.Target)
	case *dns.NS:
		return events.NormalizeName(r.Ns)
	case *dns.PTR:
		return events.NormalizeName(r.Ptr)
	case *dns.DNAME:
		return events.NormalizeName(r.Target)
	case *dns.TXT:
		var b strings.Builder
		for _, s := range r.Txt {
			b.WriteString(unescapeTXT(s))
		}
		return b.String()
	}
	return strings.TrimSpace(strings.TrimPrefix(rr.String(), rr.Header().String()))
}

// RRs renders an endpoint as the RRs of its RRset, with ttl.
func RRs(ep events.Endpoint, ttl uint32) ([]dns.RR, error) {
	name := dns.Fqdn(events.NormalizeName(ep.DNSName))
	rtype, ok := dns.StringToType[strings.ToUpper(ep.RecordType)]
	if !ok {
		return nil, fmt.Errorf("unknown record type %q", ep.RecordType)
	}
	hdr := dns.RR_Header{Name: name, Rrtype: rtype, Class: dns.ClassINET, Ttl: ttl}
	rrs := make([]dns.RR, 0, len(ep.Targets))
	for _, t := range ep.Targets {
		switch rtype {
		case dns.TypeTXT:
			rrs = append(rrs, &dns.TXT{Hdr: hdr, Txt: splitTXT(t)})
			continue
		case dns.TypeCNAME, dns.TypeNS, dns.TypePTR, dns.TypeDNAME:
			t = dns.Fqdn(events.NormalizeName(t))
		}
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", name, ttl, dns.TypeToString[rtype], t))
		if err != nil {
			return nil, fmt.Errorf("%s %s %q: %w", ep.DNSName, ep.RecordType, t, err)
		}
		if rr == nil {
			return nil, fmt.Errorf("%s %s: empty target", ep.DNSName, ep.RecordType)
		}
		rrs = append(rrs, rr)
	}
	return rrs, nil
}

// splitTXT cuts a TXT value into character-strings of at most 255 bytes,
// escaped as miekg/dns holds them.
func splitTXT(v string) []string {
	if v == "" {
		return []string{""}
	}
	var out []string
	for len(v) > 0 {
		n := min(255, len(v))
		out = append(out, escapeTXT(v[:n]))
		v = v[n:]
	}
	return out
}

func escapeTXT(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c > '~':
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unescapeTXT(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			if v, err := strconv.Atoi(s[i+1 : i+4]); err == nil && v < 256 {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *Provider) ttl(ep events.Endpoint) uint32 {
	ttl := ep.RecordTTL
	if ttl <= 0 {
		ttl = p.defaultTTL
	}
	if ttl < p.minTTL {
		ttl = p.minTTL
	}
	return uint32(min(ttl, 1<<31-1))
}

// Apply sends the changes as UPDATE messages of at most
// --rfc2136-batch-change-size changes each, in order. Each message carries
// the preconditions of its changes as prerequisites: "RRset does not
// exist" for a create, "RRset exists (value dependent)" with Old's records
// for an update or delete. The server applies a message entirely or not
// at all.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	if err := p.managed(zone); err != nil {
		return err
	}
	msgs := make([]*dns.Msg, 0, len(changes)/p.cfg.BatchChangeSize+1)
	for start := 0; start < len(changes); start += p.cfg.BatchChangeSize {
		batch := changes[start:min(start+p.cfg.BatchChangeSize, len(changes))]
		m, err := p.updateMsg(zone, batch)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	applied := 0
	for i, m := range msgs {
		if err := p.send(ctx, zone, m); err != nil {
			if applied > 0 {
				return &provider.PartialError{Applied: applied, Err: err}
			}
			return err
		}
		applied += min(p.cfg.BatchChangeSize, len(changes)-i*p.cfg.BatchChangeSize)
	}
	return nil
}

func (p *Provider) updateMsg(zone string, changes []events.Change) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	var prereq, updates []dns.RR
	for _, c := range changes {
		k := c.Key()
		name := dns.Fqdn(events.NormalizeName(k.DNSName))
		if _, ok := dns.IsDomainName(name); !ok {
			// It cannot be packed (a label over 63 octets, a name over
			// 255): this change can never be sent, the others can.
			return nil, provider.Permanentf("change %s: %q is not a name DNS can carry (labels of at most 63 octets, at most 255 in all)", c, k.DNSName)
		}
		rtype, ok := dns.StringToType[strings.ToUpper(k.RecordType)]
		if !ok {
			return nil, provider.Permanentf("change %s: unknown record type %q", c, k.RecordType)
		}
		if c.Old == nil {
			prereq = append(prereq, &dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: rtype, Class: dns.ClassNONE}})
		} else {
			old, err := RRs(*c.Old, 0)
			if err != nil {
				return nil, provider.Permanentf("change %s: old: %w", c, err)
			}
			if len(old) == 0 {
				return nil, provider.Permanentf("change %s: old endpoint has no targets", c)
			}
			prereq = append(prereq, old...) // class and TTL set by Used below
			updates = append(updates, &dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: rtype, Class: dns.ClassANY}})
		}
		if c.New != nil {
			rrs, err := RRs(*c.New, p.ttl(*c.New))
			if err != nil {
				return nil, provider.Permanentf("change %s: %w", c, err)
			}
			updates = append(updates, rrs...)
		}
	}
	for _, rr := range prereq {
		h := rr.Header()
		h.Ttl = 0
		if h.Class != dns.ClassNONE {
			h.Class = dns.ClassINET
		}
	}
	m.Answer = prereq
	m.Ns = updates
	return m, nil
}

// send exchanges one UPDATE over TCP with a fresh client, retrying
// transient failures with exponential backoff and jitter.
func (p *Provider) send(ctx context.Context, zone string, m *dns.Msg) error {
	err := provider.Retry(ctx, p.cfg.Retries, p.cfg.RetryBackoff,
		func(attempt int, wait time.Duration, last error) {
			p.log.Warn("rfc2136: retrying update", "zone", zone, "attempt", attempt, "after", wait, "err", last)
		},
		func() error { return p.exchange(ctx, zone, m.Copy()) })
	if err != nil && !errors.Is(err, provider.ErrStale) && !errors.Is(err, provider.ErrPermanent) && ctx.Err() == nil {
		return fmt.Errorf("rfc2136: %w", err)
	}
	return err
}

func (p *Provider) exchange(ctx context.Context, zone string, m *dns.Msg) error {
	c := &dns.Client{Net: "tcp", Timeout: p.cfg.Timeout}
	if !p.cfg.Insecure {
		p.sign(m)
		c.TsigProvider = tsig{p.keyName, p.cfg.TSIGSecret}
	}
	r, _, err := c.ExchangeContext(ctx, m, p.addr)
	if err != nil {
		err = fmt.Errorf("rfc2136: update %s at %s: %w", zone, p.addr, err)
		for _, tsigErr := range []error{dns.ErrAuth, dns.ErrSig, dns.ErrSecret, dns.ErrKeyAlg, dns.ErrTime, dns.ErrNoSig} {
			if errors.Is(err, tsigErr) {
				// The server rejected the key (BADSIG, BADKEY, BADTIME):
				// a configuration error that retrying does not heal.
				return provider.Permanentf("%w (check --rfc2136-tsig-keyname, --rfc2136-tsig-secret, --rfc2136-tsig-secret-alg and the clock)", err)
			}
		}
		return err
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
		return nil
	case dns.RcodeYXRrset, dns.RcodeNXRrset, dns.RcodeYXDomain, dns.RcodeNameError:
		return fmt.Errorf("%w: rfc2136: update %s: %s", provider.ErrStale, zone, dns.RcodeToString[r.Rcode])
	case dns.RcodeServerFailure:
		return fmt.Errorf("rfc2136: update %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	rc := dns.RcodeToString[r.Rcode]
	if rc == "" {
		rc = "rcode " + strconv.Itoa(r.Rcode)
	}
	return provider.Permanentf("rfc2136: update %s refused by %s: %s", zone, p.addr, rc)
}
