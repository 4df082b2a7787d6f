package provider

import (
	"context"

	"github.com/zonestream/zonestream/events"
)

// Redacting returns p with the text of every error it returns redacted
// (RedactError). The applier calls every provider through it: a result's
// error and its failed changes' errors are made from these errors' text,
// so no credential reaches the bus. A NameReader stays one.
func Redacting(p Provider) Provider {
	r := &redacting{p: p}
	if nr, ok := p.(NameReader); ok {
		return &redactingReader{redacting: r, r: nr}
	}
	return r
}

type redacting struct{ p Provider }

func (r *redacting) Zones(ctx context.Context) ([]string, error) {
	zones, err := r.p.Zones(ctx)
	return zones, RedactError(err)
}

func (r *redacting) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	eps, err := r.p.Records(ctx, zone)
	return eps, RedactError(err)
}

func (r *redacting) Apply(ctx context.Context, zone string, changes []events.Change) error {
	return RedactError(r.p.Apply(ctx, zone, changes))
}

type redactingReader struct {
	*redacting
	r NameReader
}

func (r *redactingReader) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, err := r.r.RecordsAt(ctx, zone, names)
	return eps, RedactError(err)
}

// RedactError returns err with its text redacted (Redact); errors.Is and
// errors.As still find what err wraps (ErrStale, ErrPermanent,
// *PartialError for its count). Nil stays nil.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{text: Redact(err.Error()), err: err}
}

type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
