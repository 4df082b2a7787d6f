package pdns

import (
	"context"
	"errors"
	"fmt"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// The zone's serial is the condition of a PATCH. PowerDNS' API has no
// conditional write (no ETag, no If-Match, no prerequisites in a PATCH),
// but it raises a zone's serial by one with every edit through it
// (SOA-EDIT-API). So Apply notes the serial of every read of the records
// it checks, and reads it once more just before its PATCH: an edit in
// between, by another applier or an operator, to any name of the zone,
// makes the plan stale, and nothing is written; the planner plans again
// from what PowerDNS then holds. Left unguarded: the one round trip
// between that last read and the PATCH, and edits that leave the serial
// alone (SQL behind the server, a zone without SOA-EDIT-API).

// readSerials is the zone's serial at the first and at the last read of
// a plan's records; 0 when the zone has none.
type readSerials struct{ first, last uint32 }

func (r *readSerials) saw(serial uint32) {
	if r.first == 0 {
		r.first = serial
	}
	r.last = serial
}

// unchangedSince returns an error wrapping provider.ErrStale when zone
// was edited during or since the reads that saw seen.
func (p *Provider) unchangedSince(ctx context.Context, zone string, seen readSerials) error {
	if seen.first == 0 {
		return nil // a zone without a serial: nothing to compare
	}
	serial, _, err := p.serials(ctx, zone)
	if errors.Is(err, errNoSerial) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pdns: read the serial of zone %s: %w", zone, err)
	}
	if seen.first != seen.last || serial != seen.last {
		return fmt.Errorf("%w: pdns: zone %s was edited while the plan was checked (serial %d, now %d)",
			provider.ErrStale, zone, seen.first, serial)
	}
	return nil
}
