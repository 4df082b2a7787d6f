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
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
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
const DefaultPollInterval = 10 * time.Second

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
	// RESTConfig and Client reach the API server.
	RESTConfig *rest.Config
	Client     kubernetes.Interface
}

// Source is the CRD source.
type Source struct {
	opts    Options
	gv      schema.GroupVersion
	dynamic dynamic.Interface
	enqueue func(source.Key)

	mu       sync.Mutex
	checked  bool // discovery answered at least once
	served   bool // the resource is served; informer is set
	synced   bool // informer has synced: Endpoints answers from it
	informer cache.SharedIndexInformer
	resource schema.GroupVersionResource
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
// shared factory: its informer is a dynamic one, started by Run once
// discovery shows the resource served. It counts as synced once discovery
// has answered and the resource is either not served (no objects known,
// and none ever tombstoned for it, see Endpoints) or served and its
// informer synced.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	if s.dynamic == nil || s.opts.Client == nil {
		return nil, errors.New("crd source: no API server client")
	}
	s.enqueue = enqueue
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.checked && (!s.served || s.synced)
	}, nil
}

// Served reports whether the resource is served and its informer synced.
func (s *Source) Served() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synced
}

// Run implements source.Runner: it polls discovery until the resource is
// served, then runs the informer (and the observedGeneration updater)
// until ctx ends.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	log := rt.Logger.With("apiVersion", s.opts.APIVersion, "kind", s.opts.Kind)
	var gvr schema.GroupVersionResource
	announced := false
	for {
		res, err := s.discover()
		if err == nil {
			gvr = s.gv.WithResource(res)
			break
		}
		if !errors.Is(err, errNotServed) {
			log.Warn("discovery failed; retrying", "err", err, "in", s.opts.PollInterval)
		} else {
			s.mu.Lock()
			s.checked = true
			s.mu.Unlock()
			if !announced {
				log.Info("resource not served; polling discovery until it is", "interval", s.opts.PollInterval)
				announced = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.PollInterval):
		}
	}

	inf := dynamicinformer.NewFilteredDynamicInformer(s.dynamic, gvr, s.opts.Namespace, 0,
		cache.Indexers{indexDNSName: dnsNames}, nil).Informer()
	if err := inf.SetTransform(source.Transform(s.opts.Filters.AnnotationKeys()...)); err != nil {
		log.Error("informer transform", "err", err)
	}
	tracker := newStatusTracker(s, s.dynamic.Resource(gvr), inf.GetIndexer(), rt.Logger)
	handle := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			rt.Enqueue(k)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handle(obj); tracker.objectChanged(obj) },
		UpdateFunc: func(_, obj any) { handle(obj); tracker.objectChanged(obj) },
		DeleteFunc: handle,
	}); err != nil {
		log.Error("informer handler", "err", err)
		return
	}
	s.mu.Lock()
	s.informer, s.resource, s.served, s.checked = inf, gvr, true, true
	s.mu.Unlock()
	log.Info("resource served; starting informer", "resource", gvr.String())

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { inf.Run(ctx.Done()) })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	s.mu.Lock()
	s.synced = true
	s.mu.Unlock()
	// Objects that arrived before the sync were answered ErrUnknown (when
	// the collector was already running): compute them all again, and
	// every object published before, so that the ones deleted while the
	// resource was not served get their tombstone now.
	for _, k := range inf.GetStore().ListKeys() {
		if ns, name, err := cache.SplitMetaNamespaceKey(k); err == nil {
			rt.Enqueue(source.Key{Namespace: ns, Name: name})
		}
	}
	rt.Resync()
	log.Info("informer synced", "objects", len(inf.GetStore().ListKeys()))
	tracker.run(ctx, rt.JS)
}

var errNotServed = errors.New("resource not served")

// discover returns the resource name of the configured kind, or
// errNotServed.
func (s *Source) discover() (string, error) {
	list, err := s.opts.Client.Discovery().ServerResourcesForGroupVersion(s.gv.String())
	if apierrors.IsNotFound(err) {
		return "", errNotServed
	}
	if err != nil {
		return "", err
	}
	for _, r := range list.APIResources {
		if r.Kind == s.opts.Kind && !strings.Contains(r.Name, "/") {
			return r.Name, nil
		}
	}
	return "", errNotServed
}

// Endpoints implements source.Source. Until the resource is served and its
// informer synced, every key is answered with source.ErrUnknown: the
// collector publishes nothing, in particular never a tombstone because
// the CRD is (perhaps temporarily) missing.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	s.mu.Lock()
	synced, inf := s.synced, s.informer
	s.mu.Unlock()
	if !synced {
		return nil, false, []error{source.ErrUnknown}
	}
	obj, exists, err := inf.GetIndexer().GetByKey(key.String())
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, false, []error{fmt.Errorf("unexpected object %T", obj)}
	}
	eps, problems := s.ObjectEndpoints(u)
	return eps, true, problems
}

// ObjectEndpoints computes the endpoints of one DNSEndpoint: nothing when
// the filters drop it, else its valid spec.endpoints entries.
func (s *Source) ObjectEndpoints(u *unstructured.Unstructured) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(u.GetLabels(), u.GetAnnotations()) {
		return nil, nil
	}
	return ParseEndpoints(u)
}
