package pdns

import (
	"context"
	"net/http"
	"net/url"
	"sync"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// At rest the applier lists each zone every --interval to see out-of-band
// edits. Downloading and decoding a whole zone to learn that nothing
// changed is most of what an idle applier costs, so between full downloads
// a listing first asks for the zone without its records (rrsets=false) and
// answers from the last download while serial and edited_serial are those
// it had: PowerDNS raises them on every edit through the API (SOA-EDIT-API).
// The periodic full download is the safety net for edits that leave them
// alone (SQL written behind the server's back, a zone without SOA-EDIT-API).

// listing is a zone's last full download.
type listing struct {
	serial, edited uint32
	eps            []events.Endpoint
	since          int // listings answered from it
}

type listings struct {
	mu    sync.Mutex
	zones map[string]*listing
}

// unchanged answers a listing of zone from its last download when its
// serials have not moved; false when a full download is due.
func (p *Provider) unchanged(ctx context.Context, zone string) ([]events.Endpoint, bool) {
	p.listed.mu.Lock()
	l := p.listed.zones[zone]
	due := l == nil || l.since+1 >= p.cfg.FullListingEvery
	p.listed.mu.Unlock()
	if due {
		return nil, false
	}
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrsets": {"false"}}, nil, &z); err != nil {
		return nil, false // the full download that follows reports the server's error
	}
	if z.Serial != l.serial || z.EditedSerial != l.edited || len(z.RRsets) > 0 {
		return nil, false // changed, or a server that ignores rrsets=false
	}
	p.listed.mu.Lock()
	defer p.listed.mu.Unlock()
	if p.listed.zones[zone] != l {
		return nil, false // a concurrent download replaced it
	}
	l.since++
	return provider.CloneEndpoints(l.eps), true
}

// remember keeps a full download of zone; a zone without a serial is
// downloaded at every listing.
func (p *Provider) remember(zone string, z zoneJSON, eps []events.Endpoint) {
	p.listed.mu.Lock()
	defer p.listed.mu.Unlock()
	if p.listed.zones == nil {
		p.listed.zones = map[string]*listing{}
	}
	if z.Serial == 0 || p.cfg.FullListingEvery <= 1 {
		delete(p.listed.zones, zone)
		return
	}
	p.listed.zones[zone] = &listing{serial: z.Serial, edited: z.EditedSerial, eps: provider.CloneEndpoints(eps)}
}
