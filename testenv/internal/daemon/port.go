package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrPortInUse says a server could not bind a port found free: something
// took it in between. Retry starts the server again on other ports.
var ErrPortInUse = errors.New("port in use")

// PortTaken returns ErrPortInUse with the end of p's output when that
// output holds one of markers (how the server says a port is in use), and
// nil otherwise.
func PortTaken(p *Process, markers ...string) error {
	out := p.Output()
	for _, m := range markers {
		if strings.Contains(out, m) {
			return fmt.Errorf("%w: %s", ErrPortInUse, LastLines(out, 5))
		}
	}
	return nil
}

// Retry calls start up to 5 times, again while it fails with ErrPortInUse,
// and returns the first server it starts. name prefixes the error.
func Retry[S any](ctx context.Context, name string, start func() (S, error)) (S, error) {
	var zero S
	var lastErr error
	const attempts = 5
	for range attempts {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		s, err := start()
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, ErrPortInUse) {
			return zero, err
		}
	}
	return zero, fmt.Errorf("%s: no free ports after %d attempts: %w", name, attempts, lastErr)
}

// Zones normalizes zone names: trimmed, lower case, no trailing dot. An
// empty one is an error prefixed with name.
func Zones(name string, zones []string) ([]string, error) {
	out := make([]string, 0, len(zones))
	for _, z := range zones {
		z = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(z)), ".")
		if z == "" {
			return nil, errors.New(name + ": empty zone name")
		}
		out = append(out, z)
	}
	return out, nil
}
