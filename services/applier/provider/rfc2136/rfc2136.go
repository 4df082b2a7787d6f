// Package rfc2136 is a provider for any DNS server that takes RFC 2136
// dynamic updates (BIND, Knot, PowerDNS, Windows DNS): it lists zones by
// AXFR and changes them with UPDATE messages whose RFC 2136 prerequisites
// are the plan's preconditions, so the server itself rejects a stale plan.
package rfc2136

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Provider talks RFC 2136 and AXFR to a DNS server (one of servers).
type Provider struct {
	cfg        Config
	servers    *servers
	conns      conns   // the UPDATEs' connections, kept between messages
	gss        gssKeys // the GSS-TSIG contexts, with --rfc2136-gss-tsig
	net        string  // "tcp", or "tcp-tls" with --rfc2136-use-tls
	zones      []string
	keyName    string
	alg        string
	defaultTTL int64
	minTTL     int64
	log        *slog.Logger

	copies zoneCopies // what the last transfers brought, for IXFR

	axfrs atomic.Int64 // full transfers made, for tests
	// ixfrsInFull counts IXFR answers in AXFR form (the server had no
	// history back to the copy's serial), for tests.
	ixfrsInFull atomic.Int64
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
		defaultTTL: opts.DefaultTTL,
		minTTL:     int64(cfg.MinTTL / time.Second),
		log:        opts.Logger,
		net:        "tcp",
	}
	var err error
	if p.servers, err = newServers(cfg); err != nil {
		return nil, err
	}
	if cfg.TLS.Use {
		p.net = "tcp-tls"
	}
	for _, z := range cfg.Zones {
		p.zones = append(p.zones, events.NormalizeName(z))
	}
	slices.Sort(p.zones)
	p.zones = slices.Compact(p.zones)
	if !cfg.Insecure && !cfg.gss() {
		p.keyName = dns.CanonicalName(cfg.TSIGKeyName)
		p.alg = algorithms[cfg.TSIGSecretAlg]
	}
	if cfg.GSS.Enabled && cfg.Insecure {
		p.log.Warn("rfc2136: --rfc2136-insecure set: updates go unsigned, --rfc2136-gss-tsig is not used (as in ExternalDNS)")
	}
	if cfg.gss() && cfg.TSIGAXFR {
		p.log.Info("rfc2136: with --rfc2136-gss-tsig, zone transfers go unsigned (as in ExternalDNS): --rfc2136-tsig-axfr signs nothing")
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

// Records lists zone: every RRset but the SOA (and the records DNSSEC
// signing adds), one endpoint per name and type. Between full AXFRs
// (every --rfc2136-full-transfer-every listings) it brings its copy up
// to date by IXFR instead (listing.go). It keeps what an AXFR got, for
// RecordsAt to bring up to date by IXFR.
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if err := p.managed(zone); err != nil {
		return nil, err
	}
	if eps, ok := p.listFromCopy(ctx, zone); ok {
		return eps, nil
	}
	p.axfrs.Add(1)
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	rrs, err := p.transfer(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: AXFR %s: %w", zone, err)
	}
	if len(rrs) == 0 {
		return nil, fmt.Errorf("rfc2136: AXFR %s from %s: empty transfer", zone, p.servers.inUse().addr)
	}
	p.keep(zone, rrs)
	return endpointsOf(zone, rrs), nil
}

// transfer runs the zone transfer m (AXFR or IXFR) and returns every RR
// it brought, in order, from the first server that answers.
func (p *Provider) transfer(ctx context.Context, m *dns.Msg) ([]dns.RR, error) {
	var rrs []dns.RR
	err := p.servers.try(ctx, func(s server) error {
		var err error
		rrs, err = p.transferFrom(ctx, s, m.Copy())
		if err != nil {
			return fmt.Errorf("from %s: %w", s.addr, err)
		}
		return nil
	})
	return rrs, err
}

// transferFrom runs the zone transfer m with server s.
func (p *Provider) transferFrom(ctx context.Context, s server, m *dns.Msg) ([]dns.RR, error) {
	tr := &dns.Transfer{DialTimeout: p.cfg.Timeout, ReadTimeout: p.cfg.Timeout, WriteTimeout: p.cfg.Timeout, TLS: s.tls}
	if p.cfg.TSIGAXFR && !p.cfg.gss() {
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
		env, err := tr.In(m, s.addr)
		if err != nil {
			done <- result{err: unverified(err)}
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
