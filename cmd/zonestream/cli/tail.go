package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// tailLine is one event as `zonestream tail` prints it.
type tailLine struct {
	Subject string            `json:"subject"`
	Seq     uint64            `json:"seq"`
	Time    time.Time         `json:"time"`
	Headers map[string]string `json:"headers"`
	Event   json.RawMessage   `json:"event,omitempty"`
	Error   string            `json:"error,omitempty"`
}

func tail(args []string) error {
	cmd := newOperatorCommand("tail", "zonestream tail [--new|--last] [--no-follow] SUBJECT (e.g. 'zs.desired.com.example.>')")
	onlyNew := cmd.fs.Bool("new", false, "only events published from now on")
	last := cmd.fs.Bool("last", false, "only the last event of each subject, then what follows")
	noFollow := cmd.fs.Bool("no-follow", false, "stop once the events stored so far are printed")
	subject, ok, err := cmd.parse(args)
	if !ok {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	nc, js, err := cmd.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	policy := jetstream.DeliverAllPolicy
	switch {
	case *onlyNew:
		policy = jetstream.DeliverNewPolicy
	case *last:
		policy = jetstream.DeliverLastPerSubjectPolicy
	}
	return tailSubject(ctx, js, subject, policy, !*noFollow, os.Stdout)
}

func tailSubject(ctx context.Context, js jetstream.JetStream, subject string, policy jetstream.DeliverPolicy, follow bool, out io.Writer) error {
	stream, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return fmt.Errorf("no stream holds %q: %w", subject, err)
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: policy, NamePrefix: events.ConsumerNamePrefix()})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	for {
		if !follow {
			info, err := cons.Info(ctx)
			if err == nil && info.NumPending == 0 {
				return nil
			}
		}
		msg, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrNoMessages), errors.Is(err, context.DeadlineExceeded):
			if !follow {
				return nil
			}
			continue
		case err != nil:
			return err
		}
		if err := enc.Encode(toTailLine(msg)); err != nil {
			return err
		}
	}
}

func toTailLine(msg jetstream.Msg) tailLine {
	line := tailLine{Subject: msg.Subject(), Headers: map[string]string{}}
	if meta, err := msg.Metadata(); err == nil {
		line.Seq, line.Time = meta.Sequence.Stream, meta.Timestamp
	}
	for k := range msg.Headers() {
		line.Headers[k] = msg.Headers().Get(k)
	}
	js, err := events.ToJSON(msg.Data())
	if err != nil {
		line.Error = err.Error()
	} else {
		line.Event = js
	}
	return line
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
