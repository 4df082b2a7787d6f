package pdns

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// Apply checks every change's precondition against the RRsets PowerDNS
// holds now, then writes all changes in one PATCH (REPLACE for a new
// RRset, DELETE for none), which PowerDNS applies entirely or not at all.
// When a precondition fails, nothing is written and the error wraps
// provider.ErrStale.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	var names []string
	for _, c := range changes {
		if n := fqdn(c.Key().DNSName); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	state, err := p.current(ctx, zone, names)
	if err != nil {
		return err
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
	// REPLACE and DELETE state the RRset's final content, so a PATCH
	// retried after a lost answer does no harm.
	if err := p.do(ctx, http.MethodPatch, zonePath(zone), nil, patch, nil); err != nil {
		return fmt.Errorf("pdns: patch zone %s (%d changes): %w", zone, len(changes), err)
	}
	return nil
}

// current reads the enabled records of every RRset at names (absolute),
// as sorted PowerDNS content per RRset. A few names are read one by one
// (rrset_name, PowerDNS 4.7 and later), more with one GET of the zone.
func (p *Provider) current(ctx context.Context, zone string, names []string) (map[rrKey][]string, error) {
	state := map[rrKey][]string{}
	add := func(z zoneJSON, only string) {
		for _, rs := range z.RRsets {
			name, typ := fqdn(rs.Name), strings.ToUpper(rs.Type)
			if only != "" && name != only || !slices.Contains(names, name) {
				continue
			}
			var cs []string
			for _, r := range rs.Records {
				if !r.Disabled {
					// Through Target and back: the content PowerDNS holds
					// in the form Content writes.
					cs = append(cs, Content(typ, Target(typ, r.Content)))
				}
			}
			if len(cs) > 0 {
				k := rrKey{name, typ}
				state[k] = append(state[k], cs...)
				slices.Sort(state[k])
				state[k] = slices.Compact(state[k])
			}
		}
	}
	if p.byName(zone, len(names)) {
		for _, n := range names {
			var z zoneJSON
			if err := p.do(ctx, http.MethodGet, zonePath(zone), url.Values{"rrset_name": {n}}, nil, &z); err != nil {
				return nil, fmt.Errorf("pdns: read %s in zone %s: %w", n, zone, err)
			}
			filtered := true
			for _, rs := range z.RRsets {
				if fqdn(rs.Name) != n {
					filtered = false
				}
			}
			if !filtered {
				// This server ignores rrset_name: z is the whole zone.
				p.noFilter.Store(true)
				p.log.Info("pdns: the server does not filter by rrset_name; reading whole zones before a change")
				clear(state)
				add(z, "")
				return state, nil
			}
			add(z, n)
		}
		return state, nil
	}
	var z zoneJSON
	if err := p.do(ctx, http.MethodGet, zonePath(zone), nil, nil, &z); err != nil {
		return nil, fmt.Errorf("pdns: read zone %s: %w", zone, err)
	}
	add(z, "")
	return state, nil
}
