// Package kubestatus brings the pipeline's outcome back to the
// Kubernetes objects of one cluster: a Ready condition on DNSEndpoints
// and Events on every source object when its records are published,
// rejected, failed or deleted.
//
// The collector is the only stage with credentials for its cluster, so it
// learns the outcome from the bus: the desired state per name (whose
// owners and losers name the objects), what the providers hold (observed
// state and zone lists) and the results of plans. Only the names this
// cluster's objects ask for are kept in full (book.go); the rule that
// turns them into an outcome per object and name is judge.go.
package kubestatus

import (
	"context"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// RepeatedFailures is how many consecutive failures at a name make a new
// Warning Event (the first failure makes one too): the condition always
// carries the count, the Events say it every RepeatedFailures.
const RepeatedFailures = 5

// Sink is where outcomes go: Kubernetes Events and DNSEndpoint conditions
// (writer.go writes them with client-go).
type Sink interface {
	// Event reports that obj's records at name reached o.
	Event(obj events.ObjectRef, name string, o Outcome)
	// Condition asks for obj's Ready condition to be brought up to date
	// with Outcomes(obj).
	Condition(obj events.ObjectRef)
}

// Status follows the pipeline's outcome for the objects owns accepts.
type Status struct {
	logger *slog.Logger
	sink   Sink
	// conditions says which objects carry a Ready condition (DNSEndpoints).
	conditions func(events.ObjectRef) bool
	// emit are the Event reasons written (WithEvents).
	emit []string

	mu     sync.Mutex
	book   *book
	replay bool // before every feed has caught up: no Event is news
}

// Option adjusts a Status.
type Option func(*Status)

// WithCluster names the cluster of the objects: the ownership records of
// held deletes name an object without its cluster (held.go).
func WithCluster(name string) Option { return func(s *Status) { s.book.cluster = name } }

// New returns a Status for the objects owns accepts.
func New(owns, conditions func(events.ObjectRef) bool, ownership registry.Settings, sink Sink, logger *slog.Logger, opts ...Option) *Status {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Status{logger: logger, sink: sink, conditions: conditions, book: newBook(owns, ownership), replay: true}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Run follows the streams until ctx ends. What the replay of the streams
// shows is taken as known: no Event for it, only conditions brought up to
// date once every stream has caught up.
func (s *Status) Run(ctx context.Context, js jetstream.JetStream) {
	var wg sync.WaitGroup
	caughtUp := make([]chan struct{}, len(feeds))
	for i, f := range feeds {
		caughtUp[i] = make(chan struct{})
		wg.Go(func() { s.follow(ctx, js, f, caughtUp[i]) })
	}
	for _, c := range caughtUp {
		<-c
	}
	s.mu.Lock()
	s.replay = false
	var objs []events.ObjectRef
	for o := range s.book.objects {
		if s.conditions(o) {
			objs = append(objs, o)
		}
	}
	s.mu.Unlock()
	if ctx.Err() == nil {
		s.logger.Info("object status caught up with the streams", "objects", len(objs))
	}
	for _, o := range objs {
		s.sink.Condition(o)
	}
	wg.Wait()
}

// Outcomes returns the last outcome at every name of obj.
func (s *Status) Outcomes(obj events.ObjectRef) map[string]Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.book.outcomes(obj)
}

// report hands transitions to the sink: an Event for each that is news
// and a condition update for the objects that carry one.
func (s *Status) report(ts []Transition) {
	s.mu.Lock()
	replay := s.replay
	s.mu.Unlock()
	if replay {
		return
	}
	conds := map[events.ObjectRef]bool{}
	for _, t := range ts {
		if newsworthy(t) && s.emits(t.To) {
			s.sink.Event(t.Object, t.Name, t.To)
		}
		if s.conditions(t.Object) {
			conds[t.Object] = true
		}
	}
	for o := range conds {
		s.sink.Condition(o)
	}
}

// newsworthy: a transition users hear of. Pending is no news; a failure
// is news the first time and every RepeatedFailures in a row.
func newsworthy(t Transition) bool {
	if _, _, _, ok := EventOf(t.To); !ok {
		return false
	}
	if t.To.State == Failed && t.From.State == Failed {
		return t.To.Failures != t.From.Failures && t.To.Failures%RepeatedFailures == 0 || t.To.Detail != t.From.Detail
	}
	return true
}
