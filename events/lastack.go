package events

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LastAck is the newest message a stage had acknowledged on one stream.
//
// After NATS reconnects, a stage asks whether the server lost what it had
// acknowledged (a server that restarted on an unsynced store, a replica
// that was behind). JetStream loses the end of a store, never a middle:
// if the newest message is still there, at its sequence, on its subject,
// with its hash, so is everything the stage published before it. Then the
// stage need not read back its whole published state, whose cost grows
// with every tombstone still in the stream. If it is gone or another
// message took its sequence, the stage reads back as before.
//
// A stage notes every acknowledgement, from any goroutine.
type LastAck struct {
	stream string

	mu      sync.Mutex
	seq     uint64
	subject string
	hash    string
}

// NewLastAck returns a LastAck of stream with nothing noted yet.
func NewLastAck(stream string) *LastAck { return &LastAck{stream: stream} }

// Note records that the message published to subject with content hash
// hash was acknowledged with ack, if it is the newest so far.
func (l *LastAck) Note(subject, hash string, ack *jetstream.PubAck) {
	if ack == nil || ack.Stream != l.stream {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ack.Sequence > l.seq {
		l.seq, l.subject, l.hash = ack.Sequence, subject, hash
	}
}

// Kept reports whether the stream still holds the newest acknowledged
// message as it was published. Nothing noted is not kept: the caller
// reads back. It reads one message, through a consumer of the message's
// own subject (which a stage's permissions allow, unlike a get by
// sequence), whatever the stream's length.
func (l *LastAck) Kept(ctx context.Context, js jetstream.JetStream) (bool, error) {
	l.mu.Lock()
	seq, subject, hash := l.seq, l.subject, l.hash
	l.mu.Unlock()
	if seq == 0 {
		return false, nil
	}
	cons, err := js.CreateConsumer(ctx, l.stream, jetstream.ConsumerConfig{
		Name:              ConsumerNamePrefix() + "_1",
		FilterSubject:     subject,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       seq,
		AckPolicy:         jetstream.AckNonePolicy,
		HeadersOnly:       true,
		MemoryStorage:     true,
		InactiveThreshold: time.Minute, // if the delete below is lost
	})
	if err != nil {
		return false, fmt.Errorf("check the last acknowledged message of %s: %w", l.stream, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = js.DeleteConsumer(dctx, l.stream, cons.CachedInfo().Name)
	}()
	if cons.CachedInfo().NumPending == 0 {
		return false, nil // gone, and nothing after it on its subject
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		return false, fmt.Errorf("check the last acknowledged message of %s: %w", l.stream, err)
	}
	kept := false
	for msg := range batch.Messages() {
		meta, err := msg.Metadata()
		kept = err == nil && meta.Sequence.Stream == seq && msg.Headers().Get(HeaderHash) == hash
	}
	if err := batch.Error(); err != nil {
		return false, fmt.Errorf("check the last acknowledged message of %s: %w", l.stream, err)
	}
	return kept, nil
}
