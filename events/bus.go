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
// acknowledgement. It returns the content hash it published. opts are
// the stream's conditions on the write (an expected last sequence).
func Publish(ctx context.Context, js jetstream.JetStream, subject string, ev Event, causation string, opts ...jetstream.PublishOpt) (string, *jetstream.PubAck, error) {
	msg, err := Message(subject, ev, causation)
	if err != nil {
		return "", nil, err
	}
	ack, err := publishMsg(ctx, js, msg, opts...)
	if err != nil {
		return "", nil, publishError(js, msg, err)
	}
	return msg.Header.Get(HeaderHash), ack, nil
}

// publishError is err, of publishing msg, as a publisher reports it:
// naming the subject, and ErrTooLarge, ErrStreamFull or
// ErrPermissionDenied when the connection or the server refused it for
// that.
func publishError(js jetstream.JetStream, msg *nats.Msg, err error) error {
	if errors.Is(err, nats.ErrMaxPayload) {
		return fmt.Errorf("publish %s: %w (%d bytes)", msg.Subject, ErrTooLarge, len(msg.Data))
	}
	return fmt.Errorf("publish %s: %w", msg.Subject, full(msg.Subject, Denied(js.Conn(), msg.Subject, err)))
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
func (r Received) EventID() string { return r.header(HeaderEventID) }

// Causation returns the event id of what caused the message; empty when
// nothing did.
func (r Received) Causation() string { return r.header(HeaderCausation) }

// Hash returns the message's content hash.
func (r Received) Hash() string { return r.header(HeaderHash) }

// IsTombstone says the message is a tombstone, from its headers alone (a
// tombstone is the only message published with a TTL, codec.go): what a
// headers-only read-back needs to tell a deleted key from a live one.
func (r Received) IsTombstone() bool { return r.Header.Get(jetstream.MsgTTLHeader) != "" }

// header returns a header's value as a string of its own: nats.go decodes
// every value of a message as a part of one string of the whole header
// block, so that a value kept (a hash per subject, an id per name) would
// keep all of it.
func (r Received) header(key string) string { return strings.Clone(r.Header.Get(key)) }

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
// so that it stays quiet about what has not changed. A subject whose last
// message is a tombstone is left out, as if it were empty: to the reader
// both mean nothing is there, and the recent deletes would otherwise cost
// every read-back (after each restart and reconnect) a key per delete.
func LastHashes(ctx context.Context, js jetstream.JetStream, stream, filter string) (map[string]string, error) {
	hashes := make(map[string]string)
	var mu sync.Mutex
	done := false
	err := ReadLast(ctx, js, stream, []string{filter}, func(r Received) {
		mu.Lock()
		defer mu.Unlock()
		if !done && !r.IsTombstone() {
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
		// The server's own headers (Nats-Msg-Id, Nats-TTL, Nats-Rollup,
		// Nats-Expected-...) were instructions for the original's stream:
		// on the dead letter they would be refused, or obeyed.
		if !strings.HasPrefix(k, "Nats-") {
			msg.Header[k] = v
		}
	}
	msg.Header.Set(HeaderOriginalSubject, r.Subject)
	msg.Header.Set(HeaderError, cause.Error())
	_, err := publishMsg(ctx, js, msg)
	return err
}
