package pdns

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Apply checks every change's precondition against the RRsets PowerDNS
// holds now, then writes all changes in one PATCH (REPLACE for a new
// RRset, DELETE for none), which PowerDNS applies entirely or not at all.
// When a precondition fails, or the zone was edited since it was read
// (guard.go), nothing is written and the error wraps provider.ErrStale.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	var names []string
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if n := fqdn(c.Key().DNSName); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	eps, checkedAt, err := p.recordsAt(ctx, zone, names)
	if err != nil {
		return err
	}
	// The copy the read left: a PATCH that is the zone's only edit since
	// is played on top of it.
	was := p.kept(zone)
	state := map[rrKey][]string{}
	for _, ep := range eps {
		state[keyOf(ep.Key())] = contents(ep.RecordType, ep.Targets)
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
			rs.ChangeType, rs.TTL = "REPLACE", provider.TTL(*ep, p.defaultTTL)
			for _, c := range contents(k.rtype, ep.Targets) {
				rs.Records = append(rs.Records, recordJSON{Content: c})
			}
		}
		patch.RRsets = append(patch.RRsets, rs)
	}
	if err := p.unchangedSince(ctx, zone, checkedAt); err != nil {
		return err
	}
	// REPLACE and DELETE state the RRset's final content, so a PATCH
	// retried after a lost answer does no harm.
	if err := p.do(ctx, http.MethodPatch, zonePath(zone), nil, patch, nil); err != nil {
		if !errors.Is(err, provider.ErrPermanent) {
			p.forget(zone) // the PATCH may have landed: what PowerDNS holds is unknown
		}
		return fmt.Errorf("pdns: patch zone %s (%d changes): %w", zone, len(changes), err)
	}
	p.patched(ctx, zone, was, patch.RRsets)
	return nil
}
