package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// AtRest are the options of a long-lived message iterator: a pull request
// lasts two minutes and the server says it is alive every 30 s (nats.go's
// defaults are 30 s and 5 s, 5 s for an ordered consumer), so that a
// consumer with nothing to deliver wakes the process a few times a minute
// rather than every few seconds (issue 11). A dead server is still noticed
// by the connection, and by the missing heartbeats within a minute.
func AtRest(opts ...jetstream.PullMessagesOpt) []jetstream.PullMessagesOpt {
	return append([]jetstream.PullMessagesOpt{jetstream.PullExpiry(2 * time.Minute), jetstream.PullHeartbeat(30 * time.Second)}, opts...)
}

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
		msg, err := iter.Next()
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
