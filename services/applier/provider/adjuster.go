package provider

import (
	"context"

	"github.com/zonestream/zonestream/events"
)

// Adjuster is a provider that rewrites desired records before they are
// planned, as ExternalDNS' controller lets a provider do
// (AdjustEndpoints): Route53 turns a CNAME to an ELB hostname into alias A
// and AAAA records with their alias options. The planner asks the applier
// (events.Adjust), which answers with its provider's AdjustEndpoints.
// Records come back normalized, one per name, type and set identifier;
// there may be more than went in.
type Adjuster interface {
	AdjustEndpoints(ctx context.Context, eps []events.Endpoint) ([]events.Endpoint, error)
}
