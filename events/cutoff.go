package events

import (
	"context"
	"time"
)

// A watch follows its stream live and takes each tombstone as the news
// that a key is gone. A tombstone expires (TombstoneTTL), so a watch that
// was away from its stream (disconnected, its consumer lost, its stage
// stuck) for about that long could resume after tombstones it never read,
// and keep state of keys that no longer exist. Such a watch is cut off: it
// cannot be trusted to follow any more, and its stage starts over from the
// streams, as a restarted process would.
//
// A watch is level with its stream up to a moment when it has read every
// message stored before it: when the server has nothing left to deliver to
// it (it asks at least every CutOffAfter/5 while nothing says so on its
// own), or up to the store time of the message it read last, since a
// stream delivers in the order it stored. It is cut off once it has not
// been level for CutOffAfter. A tombstone it has not read yet was stored
// after the watch was last level, so it is missed only if it expired
// within CutOffAfter of that: TombstoneTTL is three times as long, which
// also covers messages that waited in the client's buffer and the server's
// clock running apart. The store time is what keeps a watch that is
// behind but catching up (a stage reading a million names at its start)
// from being taken for one that is cut off: it is never level by the
// server's count until it has caught up.
var CutOffAfter = TombstoneTTL / 3

// cutOffRule is when a watch is cut off, and how often it asks the server
// whether it is level; a var so tests can shorten them.
var cutOffRule = cutOffTimes{after: CutOffAfter, probe: CutOffAfter / 5}

type cutOffTimes struct{ after, probe time.Duration }

type cutOffKey struct{}

// WithCutOff returns a context whose watches call fn, once each, when they
// are cut off; the stage plumbing ends the process' work with it, so that
// the process starts over from the streams. A watch under a context
// without it starts over on its own, from the last message of every
// subject: enough for a reader whose keys never go away.
func WithCutOff(ctx context.Context, fn func(error)) context.Context {
	return context.WithValue(ctx, cutOffKey{}, fn)
}

func cutOffHandler(ctx context.Context) func(error) {
	fn, _ := ctx.Value(cutOffKey{}).(func(error))
	return fn
}
