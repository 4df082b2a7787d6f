// Package crd is the collector's CRD source: the DNS endpoints of
// ExternalDNS' DNSEndpoint custom resource (externaldns.k8s.io/v1alpha1),
// read through the dynamic client without generated code (see README.md
// beside this file).
package crd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Name is the --source name of this source.
const Name = "crd"

// Defaults of --crd-source-apiversion and --crd-source-kind, ExternalDNS'.
const (
	DefaultAPIVersion = "externaldns.k8s.io/v1alpha1"
	DefaultKind       = "DNSEndpoint"
)

// DefaultPollInterval is how often discovery is asked whether the resource
// is served, while it is not.
const DefaultPollInterval = lazyinformer.DefaultPollInterval

// Flags are the flags only the CRD source has.
type Flags struct {
	// APIVersion and Kind name the custom resource (--crd-source-apiversion,
	// --crd-source-kind).
	APIVersion string
	Kind       string
	// PollInterval is how often discovery is polled while the resource is
	// not served (default 10s; no flag).
	PollInterval time.Duration
}

// RegisterFlags adds the CRD source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.APIVersion, "crd-source-apiversion", DefaultAPIVersion, "CRD source: API version of the custom resource to read")
	fs.StringVar(&f.Kind, "crd-source-kind", DefaultKind, "CRD source: kind of the custom resource to read")
}

// Options configure the CRD source.
type Options struct {
	Flags
	// Filters are --label-filter and --annotation-filter.
	Filters source.Filters
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
	// DefaultTargets (--default-targets): when given, an entry without
	// targets is valid, and takes them from the collector.
	DefaultTargets source.DefaultTargets
	source.APIOptions
}

// Source is the CRD source.
type Source struct {
	opts     Options
	gv       schema.GroupVersion
	dynamic  dynamic.Interface
	informer *lazyinformer.Informer
	tracker  *statusTracker
	synced   chan struct{} // closed by the informer's OnSynced
}

var _ source.Source = (*Source)(nil)
var _ source.Runner = (*Source)(nil)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	if opts.APIVersion == "" {
		opts.APIVersion = DefaultAPIVersion
	}
	if opts.Kind == "" {
		opts.Kind = DefaultKind
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	gv, err := schema.ParseGroupVersion(opts.APIVersion)
	if err != nil || gv.Group == "" || gv.Version == "" {
		return nil, fmt.Errorf("--crd-source-apiversion %q: want <group>/<version>", opts.APIVersion)
	}
	s := &Source{opts: opts, gv: gv}
	if opts.RESTConfig != nil {
		if s.dynamic, err = dynamic.NewForConfig(opts.RESTConfig); err != nil {
			return nil, fmt.Errorf("crd source: dynamic client: %w", err)
		}
	}
	return s, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source. The source takes nothing from the
// shared factory: its informer is a lazyinformer, started by Run once
// discovery shows the resource served. It counts as synced once discovery
// has answered and the resource is either not served (no objects known,
// and none ever tombstoned for it, see Endpoints) or served and its
// informer synced.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	if s.dynamic == nil || s.opts.Client == nil {
		return nil, errors.New("crd source: no API server client")
	}
	s.tracker = newStatusTracker(s)
	s.synced = make(chan struct{})
	handle := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			enqueue(k)
		}
	}
	var err error
	s.informer, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic,
		GroupVersion: s.gv, Kind: s.opts.Kind, Namespace: s.opts.Namespace,
		PollInterval: s.opts.PollInterval, Logger: s.opts.Logger,
		Transform: source.Transform(s.opts.Filters.AnnotationKeys()...),
		Indexers:  cache.Indexers{indexDNSName: dnsNames},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { handle(obj); s.tracker.objectChanged(obj) },
			UpdateFunc: func(_, obj any) { handle(obj); s.tracker.objectChanged(obj) },
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) { close(s.synced) },
	})
	if err != nil {
		return nil, fmt.Errorf("crd source: %w", err)
	}
	return s.informer.HasSynced, nil
}

// Served reports whether the resource is served and its informer synced.
func (s *Source) Served() bool {
	return s.informer != nil && s.informer.Served()
}

// Run implements source.Runner: it runs the informer (which polls
// discovery until the resource is served) and, once it has synced, the
// observedGeneration updater, until ctx ends.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.tracker.logger = rt.Logger
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.informer.Run(ctx) })
	select {
	case <-ctx.Done():
		return
	case <-s.synced:
	}
	// Objects that arrived before the sync were answered ErrUnknown (when
	// the collector was already running): compute them all again, and
	// every object published before, so that the ones deleted while the
	// resource was not served get their tombstone now.
	s.informer.EnqueueAll(func(ns, name string) { rt.Enqueue(source.Key{Namespace: ns, Name: name}) })
	rt.Resync()
	s.tracker.attach(s.dynamic.Resource(s.informer.Resource()), s.informer.Indexer())
	s.tracker.run(ctx, rt.JS)
}

// Endpoints implements source.Source. Until the resource is served and its
// informer synced, every key is answered with source.ErrUnknown: the
// collector publishes nothing, in particular never a tombstone because
// the CRD is (perhaps temporarily) missing.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	u, exists, err := source.Lookup[*unstructured.Unstructured](s.informer, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.ObjectEndpoints(u)
	return eps, true, problems
}

// Cached is the object at key in the informer's cache, which the caller
// must not change; false when the cache does not hold it (or is not
// synced).
func (s *Source) Cached(key source.Key) (*unstructured.Unstructured, bool) {
	u, exists, err := source.Lookup[*unstructured.Unstructured](s.informer, key)
	return u, err == nil && exists
}

// ObjectEndpoints computes the endpoints of one DNSEndpoint: nothing when
// the filters drop it, else its valid spec.endpoints entries.
func (s *Source) ObjectEndpoints(u *unstructured.Unstructured) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(u.GetLabels(), u.GetAnnotations()) {
		return nil, nil
	}
	return parseEndpoints(u, s.opts.DefaultTargets.Given())
}
