package provider

import (
	"context"

	"github.com/zonestream/zonestream/events"
)

// Checked returns p with the start that every Apply shares done once,
// before p sees the call: the zone normalized (events.NormalizeName), the
// changes checked (CheckChanges: a bad batch is a permanent error), and an
// empty batch answered without calling p. Records and RecordsAt get the
// zone normalized too. The applier and the webhook server call every
// provider through it, so a provider's own methods start from a normalized
// zone and a well-formed batch. Checked of a Checked provider is itself.
func Checked(p Provider) Provider {
	switch p.(type) {
	case *checked, *checkedReader:
		return p
	}
	c := &checked{p: p}
	if r, ok := p.(NameReader); ok {
		return &checkedReader{checked: c, r: r}
	}
	return c
}

type checked struct{ p Provider }

func (c *checked) Zones(ctx context.Context) ([]string, error) { return c.p.Zones(ctx) }

func (c *checked) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	return c.p.Records(ctx, events.NormalizeName(zone))
}

func (c *checked) Apply(ctx context.Context, zone string, changes []events.Change) error {
	zone = events.NormalizeName(zone)
	if err := CheckChanges(zone, changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	return c.p.Apply(ctx, zone, changes)
}

// checkedReader is checked for a NameReader: only a provider that can read
// names claims to (RateLimit takes a token only for those).
type checkedReader struct {
	*checked
	r NameReader
}

func (c *checkedReader) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	return c.r.RecordsAt(ctx, events.NormalizeName(zone), names)
}
