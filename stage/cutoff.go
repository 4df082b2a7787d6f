package stage

import (
	"context"
	"errors"
	"fmt"

	"github.com/zonestream/zonestream/events"
)

// UntilCutOff returns a context that ends when one of the process' watches
// is cut off from its stream (events.ErrCutOff): what the stages hold may
// then include keys whose tombstones expired unread, and only a start from
// the streams puts that right. The process exits (CutOff says why) and its
// supervisor starts it again, as after any crash.
func UntilCutOff(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	return events.WithCutOff(ctx, cancel), func() { cancel(context.Canceled) }
}

// CutOff returns why ctx, from UntilCutOff, ended when a watch was cut off;
// nil when it was not.
func CutOff(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, events.ErrCutOff) {
		return fmt.Errorf("%w; exiting, to start over from the streams", cause)
	}
	return nil
}
