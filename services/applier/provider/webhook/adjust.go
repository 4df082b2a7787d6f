package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// AdjustEndpoints asks the webhook to adjust desired records (POST
// /adjustendpoints), as ExternalDNS' controller does before it plans. TXT
// records are not sent: zonestream's TXT targets are raw values, the
// webhook's quoted, and no provider adjusts a TXT but for alias options it
// never has. An RRset the webhook answers as several endpoints is one.
func (p *Provider) AdjustEndpoints(ctx context.Context, eps []events.Endpoint) ([]events.Endpoint, error) {
	var send, out []events.Endpoint
	for _, ep := range eps {
		if ep.RecordType == events.RecordTypeTXT {
			out = append(out, ep)
			continue
		}
		send = append(send, provider.NormalizeEndpoint(ep))
	}
	if len(send) == 0 {
		return eps, nil
	}
	body, err := json.Marshal(send)
	if err != nil {
		return nil, provider.Permanent(err)
	}
	var adjusted []events.Endpoint
	_, err = p.do(ctx, http.MethodPost, PathAdjustEndpoints, body, p.cfg.ReadTimeout, &adjusted, nil)
	if counted(adjustEndpointsRequests, adjustEndpointsErrors, err) != nil {
		return nil, fmt.Errorf("webhook: adjust %d record(s): %w", len(send), err)
	}
	l := newListing(adjusted)
	for _, k := range l.keys {
		out = append(out, l.view[k])
	}
	events.SortEndpoints(out)
	return out, nil
}

var _ provider.Adjuster = (*Provider)(nil)
