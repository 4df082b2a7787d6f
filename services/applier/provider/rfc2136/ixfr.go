package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// After a plan, the applier reads back the names it touched. A query per
// name cannot be exact (servers answer ANY minimally, wildcards synthesize
// answers for names that hold nothing), so the provider keeps a copy of
// each zone from its last AXFR and brings it up to date by IXFR (RFC 1995):
// the server sends only what changed since the copy's serial, out-of-band
// edits included, and the copy stays exactly what the server holds.

// zoneCopy is a zone as the transfers so far left it.
type zoneCopy struct {
	serial uint32
	byName map[string]heldAt // normalized owner name -> its RRs

	listings int // listings answered from the copy since its AXFR
	// eps is the whole copy as endpoints at epsSerial, so that listing
	// an unchanged zone costs one SOA and no decoding.
	eps       []events.Endpoint
	epsSerial uint32
}

type zoneCopies struct {
	mu    sync.Mutex
	zones map[string]*zoneCopy
}

// keep replaces the copy of zone with the records of an AXFR.
func (p *Provider) keep(zone string, rrs []dns.RR) {
	c, err := fullCopy(rrs)
	p.copies.mu.Lock()
	defer p.copies.mu.Unlock()
	if p.copies.zones == nil {
		p.copies.zones = map[string]*zoneCopy{}
	}
	if err != nil {
		delete(p.copies.zones, zone)
		return
	}
	p.copies.zones[zone] = c
}

func fullCopy(rrs []dns.RR) (*zoneCopy, error) {
	soa, ok := first(rrs)
	if !ok {
		return nil, errors.New("transfer does not start with an SOA")
	}
	c := &zoneCopy{serial: soa.Serial, byName: make(map[string]heldAt, len(rrs))}
	for _, rr := range rrs {
		c.add(rr)
	}
	return c, nil
}

func first(rrs []dns.RR) (*dns.SOA, bool) {
	if len(rrs) == 0 {
		return nil, false
	}
	soa, ok := rrs[0].(*dns.SOA)
	return soa, ok
}

func (c *zoneCopy) add(rr dns.RR) {
	name := events.NormalizeName(rr.Header().Name)
	set := c.byName[name]
	set.add(rr)
	c.byName[name] = set
}

func (c *zoneCopy) remove(rr dns.RR) {
	name := events.NormalizeName(rr.Header().Name)
	set, ok := c.byName[name]
	if !ok {
		return
	}
	set.remove(rr)
	if len(set.rrs) == 0 {
		delete(c.byName, name)
		return
	}
	c.byName[name] = set
}

// update applies an IXFR answer to c: nothing when the serial is
// current, the differences when incremental. An answer in AXFR form (the
// server keeps no history back to c's serial) returns a new copy. After an
// error c is unusable.
func (c *zoneCopy) update(rrs []dns.RR) (*zoneCopy, error) {
	soa, ok := first(rrs)
	if !ok {
		return nil, errors.New("IXFR answer does not start with an SOA")
	}
	if len(rrs) == 1 {
		if soa.Serial != c.serial {
			return nil, fmt.Errorf("IXFR answered serial %d alone, the copy is at %d", soa.Serial, c.serial)
		}
		return c, nil
	}
	if _, ok := rrs[1].(*dns.SOA); !ok {
		return fullCopy(rrs)
	}
	// [SOA new], then per step: SOA old, deletions, SOA new, additions;
	// then [SOA new] again.
	i := 1
	for i < len(rrs)-1 {
		from, ok := rrs[i].(*dns.SOA)
		if !ok {
			return nil, fmt.Errorf("IXFR: record %d: want the SOA opening a step, got %s", i, rrs[i])
		}
		if from.Serial != c.serial {
			return nil, fmt.Errorf("IXFR: a step from serial %d, the copy is at %d", from.Serial, c.serial)
		}
		c.remove(from)
		for i++; i < len(rrs) && rrs[i].Header().Rrtype != dns.TypeSOA; i++ {
			c.remove(rrs[i])
		}
		if i >= len(rrs) {
			return nil, errors.New("IXFR: a step without its new SOA")
		}
		to := rrs[i].(*dns.SOA)
		c.add(to)
		c.serial = to.Serial
		for i++; i < len(rrs)-1 && rrs[i].Header().Rrtype != dns.TypeSOA; i++ {
			c.add(rrs[i])
		}
	}
	if c.serial != soa.Serial {
		return nil, fmt.Errorf("IXFR ended at serial %d, the server is at %d", c.serial, soa.Serial)
	}
	return c, nil
}

// records returns the RRs of the copy at names.
func (c *zoneCopy) records(names []string) []dns.RR {
	var rrs []dns.RR
	for _, n := range names {
		rrs = append(rrs, c.byName[events.NormalizeName(n)].rrs...)
	}
	return rrs
}

// errNoCopy says a zone was not transferred in full yet.
var errNoCopy = errors.New("no copy of the zone yet")

// RecordsAt brings the copy of zone up to date by IXFR and returns what it
// holds at names. Without a copy, or when the IXFR fails, it lists the
// zone by AXFR instead: the answer is exact either way.
func (p *Provider) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	if err := p.managed(zone); err != nil {
		return nil, err
	}
	eps, err := p.ixfr(ctx, zone, names)
	if err == nil {
		return eps, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !errors.Is(err, errNoCopy) {
		p.log.Info("rfc2136: IXFR failed; listing the zone by AXFR", "zone", zone, "err", err)
	}
	if eps, err = p.Records(ctx, zone); err != nil {
		return nil, err
	}
	return provider.AtNames(eps, names), nil
}

// ixfr updates the copy of zone and returns what it holds at names; a
// copy the IXFR could not be applied to is dropped.
func (p *Provider) ixfr(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	p.copies.mu.Lock()
	defer p.copies.mu.Unlock()
	c := p.copies.zones[zone]
	if c == nil {
		return nil, errNoCopy
	}
	m := new(dns.Msg)
	m.SetIxfr(dns.Fqdn(zone), c.serial, ".", ".")
	rrs, err := p.transfer(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("IXFR %s from serial %d: %w", zone, c.serial, err)
	}
	next, err := c.update(rrs)
	if err != nil {
		delete(p.copies.zones, zone)
		return nil, err
	}
	if next != c {
		p.ixfrsInFull.Add(1)
	}
	p.copies.zones[zone] = next
	return endpointsOf(zone, next.records(names)), nil
}
