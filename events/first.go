package events

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// firstFrom returns the first message (its headers only) of stream at
// or after seq on filters, or nil when there is none. It reads through a
// consumer of those subjects (which a stage's permissions allow, unlike a
// get by sequence), made for the one message and deleted after it.
func firstFrom(ctx context.Context, js jetstream.JetStream, stream string, filters []string, seq uint64) (jetstream.Msg, error) {
	cfg := jetstream.ConsumerConfig{
		Name:              ConsumerNamePrefix() + "_1",
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       seq,
		AckPolicy:         jetstream.AckNonePolicy,
		HeadersOnly:       true,
		MemoryStorage:     true,
		InactiveThreshold: time.Minute, // if the delete below is lost
	}
	// As the watches' ordered consumers ask for them: one filter in the
	// request's subject, which is what permissions match.
	if len(filters) == 1 {
		cfg.FilterSubject = filters[0]
	} else {
		cfg.FilterSubjects = filters
	}
	cons, err := js.CreateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("read %s from sequence %d: %w", stream, seq, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = js.DeleteConsumer(dctx, stream, cons.CachedInfo().Name)
	}()
	if cons.CachedInfo().NumPending == 0 {
		return nil, nil
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("read %s from sequence %d: %w", stream, seq, err)
	}
	var first jetstream.Msg
	for msg := range batch.Messages() {
		first = msg
	}
	if err := batch.Error(); err != nil {
		return nil, fmt.Errorf("read %s from sequence %d: %w", stream, seq, err)
	}
	return first, nil
}
