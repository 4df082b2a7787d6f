package rfc2136

import (
	"context"

	"github.com/zonestream/zonestream/events"
)

// IXFR is RecordsAt without its AXFR fallback: tests prove the IXFR path.
func (p *Provider) IXFR(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	return p.ixfr(ctx, zone, names)
}

// SetCopySerial makes the copy of zone claim serial, so that the server
// answers an IXFR from it in AXFR form.
func (p *Provider) SetCopySerial(zone string, serial uint32) {
	p.copies.mu.Lock()
	defer p.copies.mu.Unlock()
	p.copies.zones[zone].serial = serial
}

// AXFRs is how many full transfers p made.
func (p *Provider) AXFRs() int64 { return p.axfrs.Load() }

// IXFRsInFull is how many IXFR answers came in AXFR form.
func (p *Provider) IXFRsInFull() int64 { return p.ixfrsInFull.Load() }

// GSSNegotiations is how many GSS-TSIG contexts p agreed on with servers.
func (p *Provider) GSSNegotiations() int64 { return p.gss.negotiated.Load() }
