package pdns

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Downloading and decoding a whole zone is most of what this provider
// costs: at rest, to learn that nothing changed, and in a large plan, to
// check its preconditions and read back what it wrote. So the provider
// keeps each zone as it last downloaded it, with its own PATCHes played
// on top, together with the zone's serial and edited_serial. PowerDNS
// raises the serial by one on every edit through the API (SOA-EDIT-API),
// so a zone whose serials are still those of the copy holds what the copy
// holds: asking costs one GET without the records (rrsets=false).
//
// After its own PATCH the provider keeps the copy only when the serial
// moved by exactly one: then no one else edited the zone in between. Any
// other serial (another writer, the day's first edit under SOA-EDIT-API
// DEFAULT, a zone whose serial does not move) drops it, and the next read
// downloads. Every --pdns-full-listing-every-th listing at rest downloads
// whatever the serial, the safety net for edits that leave the serial
// alone (SQL behind the server's back).

// listing is a zone as PowerDNS held it at one serial. Its records never
// change once kept (a PATCH keeps a new listing), so readers share them.
type listing struct {
	serial, edited uint32
	eps            []events.Endpoint // sorted
	since          int               // listings at rest answered from it
}

type listings struct {
	mu    sync.Mutex
	zones map[string]*listing
}

// errNoSerial is a zone whose serials cannot say whether it changed.
var errNoSerial = errors.New("pdns: zone has no serial, or the server ignores rrsets=false")

// serials reads zone's serial and edited_serial without its records.
func (p *Provider) serials(ctx context.Context, zone string) (serial, edited uint32, err error) {
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrsets": {"false"}}, nil, &z); err != nil {
		return 0, 0, err
	}
	if z.Serial == 0 || len(z.RRsets) > 0 {
		return 0, 0, errNoSerial
	}
	return z.Serial, z.EditedSerial, nil
}

// kept is the copy of zone, nil when there is none.
func (p *Provider) kept(zone string) *listing {
	p.listed.mu.Lock()
	defer p.listed.mu.Unlock()
	return p.listed.zones[zone]
}

// current returns the copy of zone when PowerDNS still holds it (its
// serials unchanged); nil when there is none or it is out of date.
func (p *Provider) current(ctx context.Context, zone string) *listing {
	l := p.kept(zone)
	if l == nil {
		return nil
	}
	serial, edited, err := p.serials(ctx, zone)
	if err != nil || serial != l.serial || edited != l.edited {
		return nil // a failed request is reported by the download that follows
	}
	return l
}

// unchanged answers a listing at rest of zone from its copy while
// PowerDNS still holds it; false when a full download is due.
func (p *Provider) unchanged(ctx context.Context, zone string) ([]events.Endpoint, bool) {
	p.listed.mu.Lock()
	l := p.listed.zones[zone]
	due := l == nil || l.since+1 >= p.cfg.FullListingEvery
	p.listed.mu.Unlock()
	if due {
		return nil, false
	}
	l = p.current(ctx, zone)
	if l == nil {
		return nil, false
	}
	p.listed.mu.Lock()
	defer p.listed.mu.Unlock()
	if p.listed.zones[zone] != l {
		return nil, false // replaced meanwhile
	}
	l.since++
	return provider.CloneEndpoints(l.eps), true
}

// keep replaces the copy of zone with a full download; a zone without a
// serial is not kept, and downloaded at every read.
func (p *Provider) keep(zone string, z zoneJSON, eps []events.Endpoint) {
	if z.Serial == 0 || p.cfg.FullListingEvery <= 1 {
		p.forget(zone)
		return
	}
	p.store(zone, nil, &listing{serial: z.Serial, edited: z.EditedSerial, eps: provider.CloneEndpoints(eps)})
}

// store makes l the copy of zone when the copy is still was (or was is
// nil); a nil l forgets it.
func (p *Provider) store(zone string, was, l *listing) {
	p.listed.mu.Lock()
	defer p.listed.mu.Unlock()
	if was != nil && p.listed.zones[zone] != was {
		delete(p.listed.zones, zone) // two writers of the copy: trust neither
		return
	}
	if l == nil {
		delete(p.listed.zones, zone)
		return
	}
	if p.listed.zones == nil {
		p.listed.zones = map[string]*listing{}
	}
	p.listed.zones[zone] = l
}

func (p *Provider) forget(zone string) { p.store(zone, nil, nil) }

// patched keeps the copy was of zone with the RRsets a PATCH just wrote
// played on top, when the zone's serial says the PATCH was the only edit
// since the copy; otherwise it forgets the copy.
func (p *Provider) patched(ctx context.Context, zone string, was *listing, written []rrsetJSON) {
	if was == nil {
		return
	}
	serial, edited, err := p.serials(ctx, zone)
	if err != nil || serial != was.serial+1 {
		p.store(zone, was, nil)
		return
	}
	touched := make(map[events.RRsetKey]bool, len(written))
	var replaced []rrsetJSON
	for _, rs := range written {
		touched[events.RRsetKey{DNSName: events.NormalizeName(rs.Name), RecordType: rs.Type}] = true
		if rs.ChangeType == "REPLACE" {
			replaced = append(replaced, rs)
		}
	}
	eps := make([]events.Endpoint, 0, len(was.eps)+len(replaced))
	for _, ep := range was.eps {
		if !touched[ep.Key()] {
			eps = append(eps, ep)
		}
	}
	// Through endpointsOf, as a download would turn them into endpoints.
	eps = append(eps, endpointsOf(zone, replaced)...)
	slices.SortFunc(eps, events.CompareEndpoints) // normalized already; the kept ones are shared
	p.store(zone, was, &listing{serial: serial, edited: edited, eps: slices.Clip(eps), since: was.since})
}
