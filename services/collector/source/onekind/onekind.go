// Package onekind is what every source of one custom resource kind
// shares (contour-httpproxy, kong-tcpingress, openshift-route,
// skipper-routegroup): the resource read through a lazy informer that
// starts when the resource is served, each object enqueued when it
// changes in a way its endpoints depend on, and its endpoints computed
// from the cached, trimmed object. A source keeps only its rules: the
// transform, what counts as a change, and the endpoints of one object.
package onekind

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Kind says which resource a Source reads and how it turns one object
// into endpoints; T is the source's trimmed type of the object.
type Kind[T any] struct {
	// Name is the --source name.
	Name         string
	GroupVersion schema.GroupVersion
	Kind         string
	// Transform trims what the informer keeps into a T.
	Transform cache.TransformFunc
	// Same says that an update changed nothing the endpoints depend on
	// (a status condition's heartbeat, say): it enqueues nothing.
	Same func(old, cur T) bool
	// Endpoints computes the endpoints of one object, and its problems.
	Endpoints func(T) ([]events.Endpoint, []error)
}

// Options locate the resource: the API server, the namespace (empty:
// all), how often discovery is asked while the resource is not served
// (zero: lazyinformer.DefaultPollInterval).
type Options struct {
	source.APIOptions
	Namespace    string
	PollInterval time.Duration
}

// Source is a source.Source (and source.Runner) of one resource kind:
// one state per object.
type Source[T any] struct {
	kind     Kind[T]
	opts     Options
	dynamic  dynamic.Interface
	informer *lazyinformer.Informer
	// resync is the collector's Runtime.Resync, set by Run before the
	// informer starts.
	resync func()
}

// New checks the options and returns the source; it does no I/O.
func New[T any](kind Kind[T], opts Options) (*Source[T], error) {
	dyn, err := opts.Dynamic(kind.Name)
	if err != nil {
		return nil, err
	}
	return &Source[T]{kind: kind, opts: opts, dynamic: dyn, resync: func() {}}, nil
}

// Name implements source.Source.
func (s *Source[T]) Name() string { return s.kind.Name }

// Register implements source.Source: an object's change enqueues it;
// nothing else feeds its endpoints.
func (s *Source[T]) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.informer, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: s.kind.GroupVersion, Kind: s.kind.Kind,
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: s.kind.Transform,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, okOld := old.(T)
				c, okCur := cur.(T)
				if okOld && okCur && s.kind.Same(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.informer.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.kind.Name, err)
	}
	return s.informer.HasSynced, nil
}

// Run implements source.Runner: it runs the informer once the resource
// is served.
func (s *Source[T]) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.informer.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until the
// resource is served and synced.
func (s *Source[T]) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	obj, exists, err := source.Lookup[T](s.informer, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.kind.Endpoints(obj)
	return eps, true, problems
}
