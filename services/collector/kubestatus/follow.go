package kubestatus

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// feed is one stream the outcome is read from: its subjects and what a
// message of it does to the book.
type feed struct {
	stream, filter string
	apply          func(b *book, r events.Received) ([]Transition, error)
}

var feeds = []feed{
	{events.StreamDesired, events.SubjectDesired + ".>", func(b *book, r events.Received) ([]Transition, error) {
		var d events.DesiredState
		err := events.Decode(r, &d)
		if err != nil {
			return nil, err
		}
		return b.setDesired(&d), nil
	}},
	{events.StreamObserved, events.SubjectObserved + ".>", func(b *book, r events.Received) ([]Transition, error) {
		var o events.ObservedState
		if err := events.Decode(r, &o); err != nil {
			return nil, err
		}
		return b.setObserved(&o), nil
	}},
	{events.StreamObserved, events.SubjectZones + ".>", func(b *book, r events.Received) ([]Transition, error) {
		var z events.ZoneList
		if err := events.Decode(r, &z); err != nil {
			return nil, err
		}
		return b.setZones(&z), nil
	}},
	{events.StreamHeld, events.SubjectHeld + ".>", func(b *book, r events.Received) ([]Transition, error) {
		var h events.HeldDeletes
		if err := events.Decode(r, &h); err != nil {
			return nil, err
		}
		if !r.Live {
			return nil, nil // a hold of before this run was told then
		}
		return b.heldTransitions(&h), nil
	}},
	{events.StreamResults, events.SubjectResults + ".>", func(b *book, r events.Received) ([]Transition, error) {
		var res events.Result
		if err := events.Decode(r, &res); err != nil {
			return nil, err
		}
		if !r.Live {
			return nil, nil // a failure before this run is no consecutive failure of it
		}
		return b.addResult(&res), nil
	}},
}

// follow watches one feed (replay, then live) until ctx ends, retrying
// while its stream cannot be reached; caughtUp is closed once the replay
// is done.
func (s *Status) follow(ctx context.Context, js jetstream.JetStream, f feed, caughtUp chan<- struct{}) {
	delay := 100 * time.Millisecond
	for {
		done, err := events.Watch(ctx, js, f.stream, []string{f.filter}, func(r events.Received) {
			if events.IsMarker(r.Subject) {
				return
			}
			s.mu.Lock()
			ts, err := f.apply(s.book, r)
			s.mu.Unlock()
			if err != nil {
				readErrors.WithLabelValues(f.stream).Inc()
				s.logger.Warn("undecodable message ignored; the outcome it reports is not shown", "subject", r.Subject, "err", err)
				return
			}
			s.report(ts)
		})
		if err == nil {
			select {
			case <-done:
			case <-ctx.Done():
			}
			close(caughtUp)
			return
		}
		readErrors.WithLabelValues(f.stream).Inc()
		s.logger.Warn("following a stream for object status failed; retrying", "stream", f.stream, "err", err, "in", delay)
		select {
		case <-ctx.Done():
			close(caughtUp)
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}
