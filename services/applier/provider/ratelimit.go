package provider

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/zonestream/zonestream/events"
)

// RateLimit returns p with every call (Zones, Records, Apply, RecordsAt) waiting for
// a token of limiter first (--provider-rate-limit, --provider-rate-burst),
// so that the applier stays under a provider's API quota. waited, if set,
// is told how long each call waited. A nil limiter returns p itself.
func RateLimit(p Provider, limiter *rate.Limiter, waited func(time.Duration)) Provider {
	if limiter == nil {
		return p
	}
	return &rateLimited{p: p, limiter: limiter, waited: waited}
}

type rateLimited struct {
	p       Provider
	limiter *rate.Limiter
	waited  func(time.Duration)
}

// wait takes a token, or returns ctx's error when ctx ends first.
func (r *rateLimited) wait(ctx context.Context) error {
	start := time.Now()
	err := r.limiter.Wait(ctx)
	if r.waited != nil {
		r.waited(time.Since(start))
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (r *rateLimited) Zones(ctx context.Context) ([]string, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return r.p.Zones(ctx)
}

func (r *rateLimited) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return r.p.Records(ctx, zone)
}

func (r *rateLimited) Apply(ctx context.Context, zone string, changes []events.Change) error {
	if err := r.wait(ctx); err != nil {
		return err
	}
	return r.p.Apply(ctx, zone, changes)
}

// RecordsAt takes a token only when the provider can read names at all.
func (r *rateLimited) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	if _, ok := r.p.(NameReader); !ok {
		return RecordsAt(ctx, r.p, zone, names)
	}
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return RecordsAt(ctx, r.p, zone, names)
}
