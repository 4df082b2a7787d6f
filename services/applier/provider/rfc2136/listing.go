package rfc2136

import (
	"context"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// At rest the applier lists each zone every --interval to see out-of-band
// edits. Transferring a whole zone to learn that nothing changed is most
// of what an idle applier costs, so between full AXFRs a listing asks by
// IXFR for what changed since the serial of the copy: one SOA when nothing
// did, the differences when an edit (which bumps the serial: dynamic
// updates and nsupdate do) did. The answer is exactly what the server
// holds either way; the periodic AXFR is a safety net for a copy gone
// wrong (a zone file edited without bumping its serial, say).

// listFromCopy answers a listing of zone from its copy brought up to date
// by IXFR; false when a full AXFR is due or the IXFR could not be used.
func (p *Provider) listFromCopy(ctx context.Context, zone string) ([]events.Endpoint, bool) {
	p.copies.mu.Lock()
	defer p.copies.mu.Unlock()
	c := p.copies.zones[zone]
	if c == nil || c.listings+1 >= p.cfg.FullTransferEvery {
		return nil, false
	}
	m := new(dns.Msg)
	m.SetIxfr(dns.Fqdn(zone), c.serial, ".", ".")
	rrs, err := p.transfer(ctx, m)
	if err != nil {
		return nil, false // the AXFR that follows reports the server's error
	}
	listings := c.listings + 1
	next, err := c.update(rrs)
	if err != nil {
		delete(p.copies.zones, zone)
		p.log.Info("rfc2136: IXFR failed; listing the zone by AXFR", "zone", zone, "err", err)
		return nil, false
	}
	next.listings = listings
	p.copies.zones[zone] = next
	if next.eps == nil || next.epsSerial != next.serial {
		next.eps, next.epsSerial = endpointsOf(zone, next.all()), next.serial
	}
	return provider.CloneEndpoints(next.eps), true
}

// all returns every RR of the copy.
func (c *zoneCopy) all() []dns.RR {
	var rrs []dns.RR
	for _, set := range c.byName {
		rrs = append(rrs, set.rrs...)
	}
	return rrs
}
