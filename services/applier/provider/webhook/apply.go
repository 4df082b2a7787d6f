package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// touched is one RRset a batch changes: what the webhook listed for it
// before (orig, as listed; none when absent) and what it must hold after
// the whole batch (final; nil: nothing).
type touched struct {
	key   events.RRsetKey
	orig  []events.Endpoint
	final *events.Endpoint
}

// Apply checks every change's Old against a fresh GET /records (the
// protocol has no preconditions), then POSTs the batch to /records as
// ExternalDNS' Changes. A change whose Old is not what the webhook holds
// (targets; TTLs are not compared; nil: no such RRset) fails the batch
// with provider.ErrStale before anything is sent. See README.md for the
// window between the check and the POST.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	if err := p.checkFilter(ctx, changes); err != nil {
		return err
	}
	eps, err := p.list(ctx, true)
	if err != nil {
		return err
	}
	before := newListing(eps)
	order, err := play(before, changes)
	if err != nil {
		return err
	}
	batch := p.batch(order)
	if batch.Len() == 0 {
		return nil
	}
	body, err := json.Marshal(batch)
	if err != nil {
		return provider.Permanent(err)
	}
	_, err = p.do(ctx, http.MethodPost, PathRecords, body, p.cfg.WriteTimeout, nil, p.lookAgain(zone, before, order))
	if counted(applyChangesRequests, applyChangesErrors, err) != nil {
		return fmt.Errorf("webhook: apply %d change(s) to zone %s: %w", len(changes), zone, err)
	}
	return nil
}

// checkFilter fails, for good, a batch with a change outside the domain
// filter the webhook negotiated.
func (p *Provider) checkFilter(ctx context.Context, changes []events.Change) error {
	f, _, err := p.negotiated(ctx)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if n := c.Key().DNSName; !f.Match(n) {
			return provider.Permanentf("webhook: change %s: %s is outside the webhook's domain filter %s", c, n, describe(f))
		}
	}
	return nil
}

// play plays the changes in order against the listing, checking each
// precondition, and returns the RRsets they touch, in the order first
// touched, each with its final content: the POST states it once.
func play(before *listing, changes []events.Change) ([]*touched, error) {
	holds := maps.Clone(before.view)
	var order []*touched
	byKey := map[events.RRsetKey]*touched{}
	for _, c := range changes {
		k := provider.ChangeKey(c)
		have, exists := holds[k]
		if err := provider.CheckOld(c, have, exists); err != nil {
			return nil, fmt.Errorf("webhook: %w", err)
		}
		if c.New != nil {
			holds[k] = provider.NormalizeEndpoint(*c.New)
		} else {
			delete(holds, k)
		}
		t, ok := byKey[k]
		if !ok {
			t = &touched{key: k, orig: before.raw[k]}
			byKey[k] = t
			order = append(order, t)
		}
		t.final = c.New
	}
	return order, nil
}

// lookAgain is what the POST does before a retry: look again, since a
// POST whose answer was lost may have been applied (then it is done); one
// that was not is sent again only while every RRset is still as before;
// anything else is stale.
func (p *Provider) lookAgain(zone string, before *listing, order []*touched) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		eps, err := p.list(ctx, false)
		if err != nil {
			return false, err
		}
		now := newListing(eps)
		allFinal, allOrig := true, true
		for _, t := range order {
			have, exists := now.view[t.key]
			if t.final == nil && exists || t.final != nil && (!exists || !provider.SameTargets(*t.final, have)) {
				allFinal = false
			}
			was, existed := before.view[t.key]
			if existed != exists || exists && !provider.SameTargets(was, have) {
				allOrig = false
			}
		}
		switch {
		case allFinal:
			p.log.Info("webhook: the changes of a POST whose answer was lost are in place", "zone", zone)
			return true, nil
		case allOrig:
			return false, nil
		}
		return false, fmt.Errorf("%w: webhook: after a failed POST the records are neither as before nor as planned (partly applied, or changed by someone else)", provider.ErrStale)
	}
}

// batch turns the touched RRsets into ExternalDNS' Changes. UpdateOld and
// Delete carry the endpoints exactly as the webhook listed them (labels,
// TTL, provider-specific properties), since webhooks look records up by
// them. An RRset the webhook listed as several endpoints is replaced by
// deleting them all and creating the new one.
func (p *Provider) batch(order []*touched) Changes {
	var ch Changes
	for _, t := range order {
		switch {
		case len(t.orig) == 0 && t.final == nil:
			// created and deleted within the batch: nothing to send
		case len(t.orig) == 0:
			ch.Create = append(ch.Create, p.outgoing(*t.final, nil))
		case t.final == nil:
			ch.Delete = append(ch.Delete, t.orig...)
		case len(t.orig) == 1:
			ch.UpdateOld = append(ch.UpdateOld, t.orig[0])
			ch.UpdateNew = append(ch.UpdateNew, p.outgoing(*t.final, &t.orig[0]))
		default:
			ch.Delete = append(ch.Delete, t.orig...)
			ch.Create = append(ch.Create, p.outgoing(*t.final, nil))
		}
	}
	return ch
}

// outgoing is the endpoint sent for a new RRset content: normalized, with
// a TTL (the endpoint's; else, for an update, the record's; else
// --default-ttl) and, when it has none, the labels of the record it
// replaces (as ExternalDNS' plan keeps the owner label on updates).
func (p *Provider) outgoing(ep events.Endpoint, old *events.Endpoint) events.Endpoint {
	ep = provider.NormalizeEndpoint(ep)
	if ep.RecordTTL <= 0 {
		ep.RecordTTL = p.defaultTTL
		if old != nil && old.RecordTTL > 0 {
			ep.RecordTTL = old.RecordTTL
		}
	}
	if len(ep.Labels) == 0 && old != nil && len(old.Labels) > 0 {
		ep.Labels = old.Labels
	}
	return ep
}
