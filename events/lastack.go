package events

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// LastAckChecks counts the checks after a reconnect, by stream and result:
// kept (nothing read back); lost, unknown (an acknowledgement crossed the
// reconnect) and error (the stage reads back).
var LastAckChecks = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "zonestream_reconnect_checks_total",
	Help: "checks after a NATS reconnect of a stage's newest acknowledged message, by stream and result (kept: nothing read back)",
}, []string{"stream", "result"})

// LastAck keeps, per NATS connection epoch (its reconnect count), the
// newest message a stage had acknowledged on one stream.
//
// After NATS reconnects, a stage asks whether the server lost what it had
// acknowledged (a server killed before it flushed its store, a replica
// that was behind). JetStream loses the end of a store, never a middle:
// if the newest message acknowledged before the reconnect is still there,
// at its sequence, on its subject, with its hash, so is everything the
// stage published before it. Then the stage need not read back its whole
// published state, whose cost grows with every tombstone still in the
// stream. Otherwise it reads back as before.
//
// Only acknowledgements from before the reconnect prove anything: what
// the stage publishes after it may take the sequences of lost messages.
// So each acknowledgement counts in the epoch its publish began in, and
// one that arrived in another epoch (a publish held in the client while it
// was disconnected, or an acknowledgement read only after the reconnect)
// leaves it unknown which server took the message: the next check fails,
// and the stage reads back.
//
// A check that fails keeps failing until the stage says it has read back
// (ReadBack): a read-back that fails in turn must not leave the next check
// to pass for want of anything to check.
//
// A stage notes every acknowledgement, from any goroutine.
type LastAck struct {
	js     jetstream.JetStream
	stream string

	mu      sync.Mutex
	epoch   uint64   // the reconnect count newest belongs to
	newest  ackRef   // the newest acknowledgement of epoch
	earlier []ackRef // the newest of each earlier epoch, since the last check
	// readBack, when not empty, says why the stage must read back before a
	// check can pass: unknown (an acknowledgement crossed a reconnect),
	// lost or error.
	readBack string
}

// ackRef is one acknowledged message.
type ackRef struct {
	seq           uint64
	subject, hash string
}

// NewLastAck returns a LastAck of stream on js's connection. The stage
// has just read back what the stream holds (at its start): nothing
// before now needs a check.
func NewLastAck(js jetstream.JetStream, stream string) *LastAck {
	return &LastAck{js: js, stream: stream, epoch: Reconnects(js)}
}

// Epoch is the connection's epoch, read before each publish and given to
// Note with its acknowledgement.
func (l *LastAck) Epoch() uint64 { return Reconnects(l.js) }

// Publish is events.Publish on l's connection, noting the
// acknowledgement.
func (l *LastAck) Publish(ctx context.Context, subject string, ev Event, causation string, opts ...jetstream.PublishOpt) (string, *jetstream.PubAck, error) {
	epoch := l.Epoch()
	hash, ack, err := Publish(ctx, l.js, subject, ev, causation, opts...)
	if err == nil {
		l.Note(epoch, subject, hash, ack)
	}
	return hash, ack, err
}

// Note records that the message published to subject in epoch, with
// content hash hash, was acknowledged with ack.
func (l *LastAck) Note(epoch uint64, subject, hash string, ack *jetstream.PubAck) {
	if ack == nil || ack.Stream != l.stream {
		return
	}
	now := Reconnects(l.js)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll(now)
	if epoch != now {
		l.mustReadBack("unknown")
		return
	}
	if ack.Sequence > l.newest.seq {
		l.newest = ackRef{ack.Sequence, subject, hash}
	}
}

// roll starts epoch now, keeping the newest acknowledgement of the one it
// ends for the next check. The caller holds l.mu.
func (l *LastAck) roll(now uint64) {
	if now == l.epoch {
		return
	}
	if l.newest.seq != 0 {
		l.earlier = append(l.earlier, l.newest)
	}
	l.epoch, l.newest = now, ackRef{}
}

// mustReadBack fails every check until the stage has read back, for
// reason. The caller holds l.mu.
func (l *LastAck) mustReadBack(reason string) {
	if l.readBack == "" {
		l.readBack = reason
	}
}

// ReadBack says the stage has read back what the stream held, having
// begun in epoch: checks may pass again, unless the connection has
// reconnected since (what was read may be older than a loss).
func (l *LastAck) ReadBack(epoch uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if Reconnects(l.js) == epoch {
		l.readBack = ""
	}
}

// Kept reports whether the stream still holds, as published, the newest
// message acknowledged in each epoch since the last check: then nothing
// the stage published was lost. A stage that published nothing since its
// last check had nothing to lose. It reads one message per epoch, through
// a consumer of the message's own subject (which a stage's permissions
// allow, unlike a get by sequence), whatever the stream's length. A
// caller told false, or an error, reads back and then calls ReadBack.
func (l *LastAck) Kept(ctx context.Context) (bool, error) {
	now := Reconnects(l.js)
	l.mu.Lock()
	l.roll(now)
	targets, reason := l.earlier, l.readBack
	l.earlier = nil // checked now, or covered by the read-back
	l.mu.Unlock()
	var err error
	for _, t := range targets {
		if reason != "" {
			break
		}
		var kept bool
		switch kept, err = l.find(ctx, t); {
		case err != nil:
			reason = "error"
		case !kept:
			reason = "lost"
		}
	}
	if reason == "" {
		LastAckChecks.WithLabelValues(l.stream, "kept").Inc()
		return true, nil
	}
	l.mu.Lock()
	l.mustReadBack(reason)
	l.mu.Unlock()
	LastAckChecks.WithLabelValues(l.stream, reason).Inc()
	return false, err
}

// find reports whether the stream holds the acknowledged message t.
func (l *LastAck) find(ctx context.Context, t ackRef) (bool, error) {
	first, err := firstFrom(ctx, l.js, l.stream, []string{t.subject}, t.seq)
	if err != nil || first == nil {
		return false, err
	}
	meta, err := first.Metadata()
	return err == nil && meta.Sequence.Stream == t.seq && first.Headers().Get(HeaderHash) == t.hash, nil
}
