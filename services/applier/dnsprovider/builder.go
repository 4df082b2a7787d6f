package dnsprovider

import (
	"context"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// Declared is one provider as an object declares it, ready to build.
type Declared struct {
	// Provider is ExternalDNS' --provider value (rfc2136, pdns, aws, ...).
	Provider string
	// Args are the provider's flags, --name=value: the object's settings
	// and the keys of its Secret named like flags (rfc2136-tsig-secret).
	Args []string
	// Env are the Secret's keys named like environment variables
	// (AWS_ACCESS_KEY_ID), for provider SDKs that read only those.
	Env map[string]string
	// Options are what every provider is built with.
	Options provider.Options
}

// Builder builds the provider of a declared object that is not one of
// the applier's own (zonestream's own providers are built by the applier):
// a build with ExternalDNS' providers (-tags externaldns) passes one.
type Builder func(ctx context.Context, d Declared) (provider.Provider, error)
