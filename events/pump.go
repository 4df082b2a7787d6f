package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pumpPause is how long Pump waits after a transient iterator error (a
// missed heartbeat, a pull that timed out) before asking again.
const pumpPause = 200 * time.Millisecond

// Pump hands every message of iter to fn, from the calling goroutine,
// until ctx ends or iter is stopped. It returns ctx's error, or
// jetstream.ErrMsgIteratorClosed when iter was stopped, so that the caller
// may start a new one. Other errors are passed to onErr (nil: dropped) and
// the loop pauses briefly: the client recovers from them on its own.
func Pump(ctx context.Context, iter jetstream.MessagesContext, fn func(jetstream.Msg), onErr func(error)) error {
	stop := context.AfterFunc(ctx, iter.Stop)
	defer stop()
	for {
		// With ctx, not only Stop: nats.go's ordered consumer can miss a
		// Stop that lands while it recreates its consumer (after a
		// reconnect), and Next would then wait on the new one.
		msg, err := iter.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return err
		}
		if err != nil {
			if onErr != nil {
				onErr(err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pumpPause):
			}
			continue
		}
		fn(msg)
	}
}
