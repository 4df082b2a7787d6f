package dnsprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// buildWithin runs build under a deadline it cannot ignore. Some of
// ExternalDNS' constructors call their API, and not all of them heed ctx:
// one that hangs is abandoned (its object refused, ProviderNotAvailable)
// and the controller goes on with the other objects, whose builds would
// otherwise wait behind it for good.
func buildWithin(ctx context.Context, limit time.Duration, build Builder, d Declared) (provider.Provider, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type built struct {
		p   provider.Provider
		err error
	}
	out := make(chan built, 1) // an abandoned build still returns, to no one
	go func() {
		p, err := build(ctx, d)
		out <- built{p, err}
	}()
	select {
	case b := <-out:
		return b.p, b.err
	case <-ctx.Done():
		return nil, fmt.Errorf("building provider %s did not end within %s (--provider-timeout): abandoned", d.Provider, limit)
	}
}
