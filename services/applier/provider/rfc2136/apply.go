package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

func (p *Provider) ttl(ep events.Endpoint) uint32 {
	return uint32(min(max(provider.TTL(ep, p.defaultTTL), p.minTTL), provider.MaxTTL))
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

// send exchanges one UPDATE over TCP (or TLS), retrying
// transient failures with exponential backoff and jitter.
func (p *Provider) send(ctx context.Context, zone string, m *dns.Msg) error {
	err := provider.Retry(ctx, p.cfg.Retries, p.cfg.RetryBackoff,
		func(attempt int, wait time.Duration, last error) {
			p.log.Warn("rfc2136: retrying update", "zone", zone, "attempt", attempt, "after", wait, "err", last)
		},
		func() error {
			return p.servers.try(ctx, func(s server) error { return p.exchange(ctx, s, zone, m.Copy()) })
		})
	if err != nil && !errors.Is(err, provider.ErrStale) && !errors.Is(err, provider.ErrPermanent) && ctx.Err() == nil {
		return fmt.Errorf("rfc2136: %w", err)
	}
	return err
}

func (p *Provider) exchange(ctx context.Context, s server, zone string, m *dns.Msg) error {
	if p.cfg.gss() {
		return p.exchangeGSS(ctx, s, zone, m)
	}
	c := &dns.Client{Net: p.net, TLSConfig: s.tls, Timeout: p.cfg.Timeout}
	if !p.cfg.Insecure {
		p.sign(m)
		c.TsigProvider = tsig{p.keyName, p.cfg.TSIGSecret}
	}
	r, err := p.conns.exchange(ctx, c, m, s.addr)
	return answer(s, zone, r, err, "--rfc2136-tsig-keyname, --rfc2136-tsig-secret, --rfc2136-tsig-secret-alg")
}

// exchangeGSS sends m signed with s's GSS-TSIG context. A kept context
// the server refuses (it restarted, or let the TKEY expire) is dropped and
// m sent once more with one negotiated anew.
func (p *Provider) exchangeGSS(ctx context.Context, s server, zone string, m *dns.Msg) error {
	for attempt := 0; ; attempt++ {
		k, fresh, err := p.gss.key(ctx, p.cfg.GSS, s, p.net, p.cfg.Timeout)
		if err != nil {
			return err
		}
		c := &dns.Client{Net: p.net, TLSConfig: s.tls, Timeout: p.cfg.Timeout}
		signed := m.Copy() // signing takes the TSIG record out: m stays for another try
		signGSS(c, signed, k)
		k.inUse.Lock()
		r, err := p.conns.exchange(ctx, c, signed, s.addr)
		k.inUse.Unlock()
		if !fresh && attempt == 0 && ctx.Err() == nil && (err != nil || r.Rcode == dns.RcodeNotAuth) {
			p.log.Info("rfc2136: GSS-TSIG context refused or failed; negotiating a new one", "server", s.addr, "err", err)
			p.gss.drop(s.addr, k)
			continue
		}
		if err == nil && r.Rcode == dns.RcodeNotAuth {
			// A context just agreed on, refused: the principal may not
			// update the zone (update-policy).
			p.gss.drop(s.addr, k)
		}
		return answer(s, zone, r, err, "--rfc2136-kerberos-username, --rfc2136-kerberos-realm, the server's update policy")
	}
}

// answer turns the server's answer to an UPDATE (or the failure to get
// one) into the provider's error; check names what to look at when the
// server rejects the signature.
func answer(s server, zone string, r *dns.Msg, err error, check string) error {
	if err != nil {
		err = fmt.Errorf("rfc2136: update %s at %s: %w", zone, s.addr, err)
		for _, tsigErr := range []error{dns.ErrAuth, dns.ErrSig, dns.ErrSecret, dns.ErrKeyAlg, dns.ErrTime, dns.ErrNoSig} {
			if errors.Is(err, tsigErr) {
				// The server rejected the key (BADSIG, BADKEY, BADTIME):
				// a configuration error that retrying does not heal.
				return provider.Permanentf("%w (check %s and the clock)", err, check)
			}
		}
		return unverified(err)
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
		return nil
	case dns.RcodeYXRrset, dns.RcodeNXRrset, dns.RcodeYXDomain, dns.RcodeNameError:
		return fmt.Errorf("%w: rfc2136: update %s: %s", provider.ErrStale, zone, dns.RcodeToString[r.Rcode])
	case dns.RcodeServerFailure:
		return fmt.Errorf("rfc2136: update %s at %s: %s", zone, s.addr, dns.RcodeToString[r.Rcode])
	}
	rc := dns.RcodeToString[r.Rcode]
	if rc == "" {
		rc = "rcode " + strconv.Itoa(r.Rcode)
	}
	return provider.Permanentf("rfc2136: update %s refused by %s: %s", zone, s.addr, rc)
}
