package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publish encodes ev and publishes it to subject, waiting for the stream's
// acknowledgement. It returns the content hash it published.
func Publish(ctx context.Context, js jetstream.JetStream, subject string, ev Event, causation string) (string, *jetstream.PubAck, error) {
	msg, err := Message(subject, ev, causation)
	if err != nil {
		return "", nil, err
	}
	ack, err := js.PublishMsg(ctx, msg)
	if errors.Is(err, nats.ErrMaxPayload) {
		return "", nil, fmt.Errorf("publish %s: %w (%d bytes)", subject, ErrTooLarge, len(msg.Data))
	}
	if err != nil {
		return "", nil, fmt.Errorf("publish %s: %w", subject, Denied(js.Conn(), subject, err))
	}
	return msg.Header.Get(HeaderHash), ack, nil
}

// Denied returns err as ErrPermissionDenied when the server refused subject
// to nc: the server drops a refused message and says so only out of band,
// so the request itself just times out, which would read as a slow server.
func Denied(nc *nats.Conn, subject string, err error) error {
	if err == nil || nc == nil {
		return err
	}
	last := nc.LastError()
	if errors.Is(last, nats.ErrPermissionViolation) && strings.Contains(last.Error(), `"`+subject+`"`) {
		return fmt.Errorf("%w: %v", ErrPermissionDenied, last)
	}
	return err
}

// Received is one message as a service sees it.
type Received struct {
	Subject string
	Header  nats.Header
	Data    []byte
	// Seq is the message's sequence in its stream.
	Seq uint64
	// Pending is how many messages the consumer had yet to deliver after this one.
	Pending uint64
	// Time is when the stream stored the message.
	Time time.Time
	// Live says the message was stored after its reader started watching:
	// news, not history. Only a live mark is trusted (marks.go).
	Live bool
}

// EventID returns the message's event id, the causation of what it causes.
func (r Received) EventID() string { return r.Header.Get(HeaderEventID) }

// Hash returns the message's content hash.
func (r Received) Hash() string { return r.Header.Get(HeaderHash) }

// WatchOption tunes Watch.
type WatchOption func(*jetstream.OrderedConsumerConfig)

// HeadersOnly delivers headers without payloads: enough to learn the hash
// of every key's last state.
func HeadersOnly() WatchOption {
	return func(c *jetstream.OrderedConsumerConfig) { c.HeadersOnly = true }
}

// Watch replays the last message of every subject in stream matching
// filters, then follows new messages, calling fn for each from one
// goroutine. The returned channel is closed once the replay is done: what
// fn has seen by then is the stream's state when Watch was called. Watch
// stops when ctx ends; a broken consumer is recreated by the client.
func Watch(ctx context.Context, js jetstream.JetStream, stream string, filters []string, fn func(Received), opts ...WatchOption) (<-chan struct{}, error) {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: filters,
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	}
	for _, o := range opts {
		o(&cfg)
	}
	w := &watch{js: js, stream: stream, cfg: cfg, fn: fn, caughtUp: make(chan struct{})}
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	info, err := w.cons.Info(ctx)
	if err != nil {
		w.iter.Stop()
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	if info.NumPending == 0 && info.Delivered.Consumer == 0 {
		w.done()
	}
	go w.follow(ctx)
	go w.guard(ctx)
	return w.caughtUp, nil
}

// watch is one Watch: an ordered consumer, started again from the last
// message of every subject when the stream went back in time.
type watch struct {
	js       jetstream.JetStream
	stream   string
	cfg      jetstream.OrderedConsumerConfig
	fn       func(Received)
	caughtUp chan struct{}
	once     sync.Once

	mu      sync.Mutex
	cons    jetstream.Consumer
	iter    jetstream.MessagesContext
	history uint64 // the stream's last sequence when the consumer started
	seen    uint64 // the highest sequence delivered
	restart bool   // the iterator was stopped to start again
}

func (w *watch) done() { w.once.Do(func() { close(w.caughtUp) }) }

// start creates the consumer: what is in the stream now is history, what
// comes after is live.
func (w *watch) start(ctx context.Context) error {
	st, err := w.js.Stream(ctx, w.stream)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.stream, err)
	}
	cons, err := w.js.OrderedConsumer(ctx, w.stream, w.cfg)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.stream, err)
	}
	// nats.go's pull timing (30 s requests, heartbeats every 5 s): a pull
	// stranded by a server restart is noticed within seconds. With
	// 2-minute pulls, quieter at rest, a replay started just after a
	// restart waited out the whole pull (TestChaos, NATS killed).
	iter, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.stream, err)
	}
	w.mu.Lock()
	w.cons, w.iter, w.history, w.seen, w.restart = cons, iter, st.CachedInfo().State.LastSeq, 0, false
	w.mu.Unlock()
	return nil
}

// follow hands every message to fn until ctx ends, starting the consumer
// again when guard stopped it for that.
func (w *watch) follow(ctx context.Context) {
	for {
		w.mu.Lock()
		iter, history := w.iter, w.history
		w.mu.Unlock()
		err := Pump(ctx, iter, func(msg jetstream.Msg) { w.deliver(msg, history) }, nil)
		if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return
		}
		w.mu.Lock()
		again := w.restart
		w.mu.Unlock()
		if !again {
			return
		}
		for w.start(ctx) != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// deliver hands one message to fn; history is the stream's last sequence
// when the consumer started, what came after is live.
func (w *watch) deliver(msg jetstream.Msg, history uint64) {
	meta, err := msg.Metadata()
	if err != nil {
		return
	}
	w.mu.Lock()
	w.seen = max(w.seen, meta.Sequence.Stream)
	w.mu.Unlock()
	w.fn(Received{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data(),
		Seq: meta.Sequence.Stream, Pending: meta.NumPending, Time: meta.Timestamp,
		Live: meta.Sequence.Stream > history})
	if meta.NumPending == 0 {
		w.done()
	}
}

// guard notices, after NATS reconnected, that the stream's last sequence
// is below one already delivered: the server restarted and lost messages
// it had acknowledged, and new messages reuse those sequences, which the
// ordered consumer, resuming after the highest it delivered, would skip.
// The watch then starts again from the last message of every subject:
// each is the whole state of its key, so reading one again is harmless.
func (w *watch) guard(ctx context.Context) {
	nc := w.js.Conn()
	if nc == nil {
		return
	}
	// Told by the connection rather than polling it: a watch at rest wakes
	// nobody (issue 11).
	connected := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(connected)
	var retry <-chan time.Time // while a check could not ask the server
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-connected:
			if !ok {
				return // the connection closed
			}
		case <-retry:
		}
		retry = nil
		st, err := w.js.Stream(ctx, w.stream)
		if err != nil {
			retry = time.After(time.Second)
			continue
		}
		w.mu.Lock()
		if last := st.CachedInfo().State.LastSeq; last < w.seen {
			w.restart = true
			w.iter.Stop()
		}
		w.mu.Unlock()
	}
}

// ReadLast calls fn for the last message of every subject of stream
// matching filters, and returns once it has seen them all. fn may still be
// called for a newer message while ReadLast returns: callers guard what fn
// writes and stop taking messages in once it has returned.
func ReadLast(ctx context.Context, js jetstream.JetStream, stream string, filters []string, fn func(Received), opts ...WatchOption) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	caughtUp, err := Watch(wctx, js, stream, filters, fn, opts...)
	if err != nil {
		return err
	}
	select {
	case <-caughtUp:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LastHashes returns the content hash of the last message on every subject
// of stream matching filter: what a service published before it restarted,
// so that it stays quiet about what has not changed.
func LastHashes(ctx context.Context, js jetstream.JetStream, stream, filter string) (map[string]string, error) {
	hashes := make(map[string]string)
	var mu sync.Mutex
	done := false
	err := ReadLast(ctx, js, stream, []string{filter}, func(r Received) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			hashes[r.Subject] = r.Hash()
		}
	}, HeadersOnly())
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	done = true
	return hashes, nil
}

// Holds reports whether stream holds any message on subject: how a stage
// learns, at every heartbeat or listing, that what it published was purged.
// The answer comes from the stream's per-subject counts, which the server
// keeps in memory; reading the message itself would load its whole block
// (megabytes, at rest most of an idle minute's work).
func Holds(ctx context.Context, js jetstream.JetStream, stream, subject string) (bool, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return false, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return false, err
	}
	return info.State.Subjects[subject] > 0, nil
}

// DeadLetter parks a message that could not be decoded, with the reason,
// so that nothing is lost and an operator can look at it.
func DeadLetter(ctx context.Context, js jetstream.JetStream, service string, r Received, cause error) error {
	msg := nats.NewMsg(DeadLetterSubject(service))
	msg.Data = r.Data
	for k, v := range r.Header {
		msg.Header[k] = v
	}
	msg.Header.Del(nats.MsgIdHdr)
	msg.Header.Set(HeaderOriginalSubject, r.Subject)
	msg.Header.Set(HeaderError, cause.Error())
	_, err := js.PublishMsg(ctx, msg)
	return err
}
