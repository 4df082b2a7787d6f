package events

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// AsyncWindow bounds the messages PublishAll has in flight at once: a
// round trip per message would bound a stage to a few thousand messages a
// second; the window stays well under the client's own limit of pending
// async publishes.
const AsyncWindow = 256

// AsyncAckTimeout is how long a message of PublishAll waits for its
// acknowledgement before it is sent again, synchronously.
const AsyncAckTimeout = 10 * time.Second

// PublishAll publishes msgs on l's connection, at most AsyncWindow in
// flight, and returns once each is acknowledged or has failed: whoever
// reads the stream afterwards sees them all, and a later publish on one of
// their subjects cannot overtake them. A message whose publish failed or
// went unacknowledged is sent once more, synchronously, with the same
// Nats-Msg-Id, so that the stream drops the copy when the first did land.
//
// A message too large for the connection is not sent again: its first
// failure is final, with ErrTooLarge.
//
// acked is called with the index of each message acknowledged (which l
// notes); failed, when not nil, with each failure (final: the last). The
// error joins the final failures; ctx ending returns its error.
func (l *LastAck) PublishAll(ctx context.Context, msgs []*nats.Msg, acked func(i int, ack *jetstream.PubAck), failed func(i int, err error, final bool)) error {
	type inflight struct {
		i     int
		epoch uint64
		paf   jetstream.PubAckFuture
	}
	var pending []inflight
	var again []int
	var errs []error
	// fail reports a failure, and says whether to send the message again.
	fail := func(i int, err error, final bool) bool {
		err = publishError(l.js, msgs[i], err)
		final = final || errors.Is(err, ErrTooLarge)
		if failed != nil {
			failed(i, err, final)
		}
		if final {
			errs = append(errs, err)
		}
		return !final
	}
	done := func(i int, epoch uint64, ack *jetstream.PubAck) {
		l.Note(epoch, msgs[i].Subject, msgs[i].Header.Get(HeaderHash), ack)
		acked(i, ack)
	}
	// wait takes the oldest message in flight out of the window.
	wait := func() error {
		f := pending[0]
		pending = pending[1:]
		t := time.NewTimer(AsyncAckTimeout)
		defer t.Stop()
		select {
		case ack := <-f.paf.Ok():
			done(f.i, f.epoch, ack)
		case err := <-f.paf.Err():
			if fail(f.i, err, false) {
				again = append(again, f.i)
			}
		case <-t.C:
			if fail(f.i, errors.New("not acknowledged in time"), false) {
				again = append(again, f.i)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	for i, m := range msgs {
		if len(pending) >= AsyncWindow {
			if err := wait(); err != nil {
				return err
			}
		}
		epoch := l.Epoch()
		paf, err := l.js.PublishMsgAsync(m)
		if err != nil {
			if fail(i, err, false) {
				again = append(again, i)
			}
			continue
		}
		pending = append(pending, inflight{i, epoch, paf})
	}
	for len(pending) > 0 {
		if err := wait(); err != nil {
			return err
		}
	}
	for _, i := range again {
		epoch := l.Epoch()
		ack, err := publishMsg(ctx, l.js, msgs[i])
		if err != nil {
			fail(i, err, true)
			continue
		}
		done(i, epoch, ack)
	}
	return errors.Join(errs...)
}
