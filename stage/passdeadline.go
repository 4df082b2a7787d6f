package stage

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"
)

// A --once process must end in bounded time in every failure mode. The
// planner ends its pass at --once-timeout with what it still waits for;
// this deadline, a little later, ends the process where the planner cannot
// see (a NATS server that never answers, a stage that does not return).

// passGrace is how long after --once-timeout the process as a whole ends.
const passGrace = 30 * time.Second

// errPassDeadline is the cause of a context ended by WithPassDeadline.
var errPassDeadline = errors.New("--once: the process did not end within --once-timeout")

// WithPassDeadline bounds ctx when fs holds --once, set, and a non-zero
// --once-timeout; else it returns ctx as it is.
func WithPassDeadline(ctx context.Context, fs *flag.FlagSet) (context.Context, context.CancelFunc) {
	once, timeout := fs.Lookup("once"), fs.Lookup("once-timeout")
	if once == nil || timeout == nil || once.Value.String() != "true" {
		return ctx, func() {}
	}
	d, err := time.ParseDuration(timeout.Value.String())
	if err != nil || d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d+passGrace, fmt.Errorf("%w=%s (and %s more)", errPassDeadline, d, passGrace))
}

// PassDeadlineExceeded returns why ctx ended when WithPassDeadline ended
// it, else nil.
func PassDeadlineExceeded(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errPassDeadline) {
		return cause
	}
	return nil
}
