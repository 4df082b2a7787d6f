// Package lazyinformer runs a dynamic informer for one API resource that
// may not be served yet: a custom resource whose CRD is installed after the
// collector started, or removed and installed again later.
//
// An Informer polls discovery until its group/version serves its kind,
// then starts a dynamic informer for it and keeps it running until the
// context ends. Objects go through the transform before they reach the
// cache, the indexers and the handler, so a transform may turn the
// *unstructured.Unstructured into a typed, trimmed struct.
//
// Usage, from a source:
//
//	inf, err := lazyinformer.New(lazyinformer.Options{
//		Discovery: client.Discovery(), Dynamic: dyn,
//		GroupVersion: gv, Kind: "Gateway",
//		Transform: trim, Indexers: idx, Handler: handler,
//		OnSynced: func(ctx context.Context) { /* re-enqueue */ },
//	})
//	// Register: return inf.HasSynced as the source's InformerSynced.
//	// Runner.Run: go inf.Run(ctx)
//	// Endpoints: if !inf.Served() { return source.ErrUnknown }; inf.Indexer()...
//
// HasSynced turns true once discovery has answered and the resource is
// either not served (there is nothing to wait for) or served and synced.
// Served tells whether the cache can be trusted: while it is false, a
// source must not conclude that an object is gone.
package lazyinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// DefaultPollInterval is how often discovery is asked whether the resource
// is served, while it is not.
const DefaultPollInterval = 10 * time.Second

// Options configure an Informer. Discovery, Dynamic, GroupVersion and Kind
// are required.
type Options struct {
	Discovery    discovery.DiscoveryInterface
	Dynamic      dynamic.Interface
	GroupVersion schema.GroupVersion
	// Kind is the resource's kind; its plural name comes from discovery.
	Kind string
	// Resource, instead of Kind, names the resource by its plural name
	// (the unstructured source's --unstructured-resource); its kind then
	// comes from discovery.
	Resource string
	// FallbackVersions are other versions of the group tried in order
	// when GroupVersion does not serve Kind (an older CRD serving only a
	// previous version); the transform sees objects of the one found.
	FallbackVersions []string
	// Namespace limits the informer to one namespace; empty: all. A
	// cluster-scoped resource is read whole whatever it says.
	Namespace string
	// PollInterval is how often discovery is polled while the resource is
	// not served (default DefaultPollInterval).
	PollInterval time.Duration
	// Transform is applied to every object before it is cached, indexed
	// or handed to Handler (may be nil).
	Transform cache.TransformFunc
	// Indexers are added to the informer's cache (may be nil).
	Indexers cache.Indexers
	// Handler is notified of every change (may be nil).
	Handler cache.ResourceEventHandler
	// OnSynced is called once, from Run, when the informer has synced:
	// objects asked about before got source.ErrUnknown and must be
	// computed again (may be nil). It must not block for long.
	OnSynced func(ctx context.Context)
	// Logger receives discovery and start-up messages (default slog.Default).
	Logger *slog.Logger
}

// Informer is a dynamic informer started once its resource is served.
type Informer struct {
	opts Options

	mu       sync.Mutex
	checked  bool // discovery answered at least once
	served   bool // the resource is served; informer is set
	synced   bool // informer has synced
	informer cache.SharedIndexInformer
	resource schema.GroupVersionResource
	kind     string // as discovery named it
}

// New returns an Informer; it does no I/O until Run.
func New(opts Options) (*Informer, error) {
	if opts.Discovery == nil || opts.Dynamic == nil {
		return nil, errors.New("lazyinformer: no API server client")
	}
	if opts.GroupVersion.Version == "" || (opts.Kind == "") == (opts.Resource == "") {
		return nil, fmt.Errorf("lazyinformer: incomplete resource %q, kind %q, resource %q (one of kind and resource)",
			opts.GroupVersion, opts.Kind, opts.Resource)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Informer{opts: opts}, nil
}

// HasSynced is a cache.InformerSynced: true once discovery has answered
// and the resource is either not served or served and synced.
func (i *Informer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.checked && (!i.served || i.synced)
}

// Served reports whether the resource is served and the informer synced:
// only then does Indexer answer for every object.
func (i *Informer) Served() bool {
	if i == nil {
		return false // never made: not served
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.synced
}

// Indexer is the informer's cache, nil until the resource is served.
func (i *Informer) Indexer() cache.Indexer {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.informer == nil {
		return nil
	}
	return i.informer.GetIndexer()
}

// Resource is the resource found by discovery (zero until served).
func (i *Informer) Resource() schema.GroupVersionResource {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.resource
}

// Kind is the resource's kind found by discovery (empty until served).
func (i *Informer) Kind() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.kind
}

// Run polls discovery until the resource is served, then runs the
// informer until ctx ends. Call it once.
func (i *Informer) Run(ctx context.Context) {
	log := i.opts.Logger.With("group", i.opts.GroupVersion.Group, "kind", i.opts.Kind)
	if i.opts.Resource != "" {
		log = i.opts.Logger.With("group", i.opts.GroupVersion.Group, "resource", i.opts.Resource)
	}
	var gvr schema.GroupVersionResource
	var kind string
	var namespaced bool
	announced := false
	for {
		var err error
		if gvr, kind, namespaced, err = i.discover(); err == nil {
			break
		}
		if !errors.Is(err, errNotServed) {
			log.Warn("discovery failed; retrying", "err", err, "in", i.opts.PollInterval)
		} else {
			i.mu.Lock()
			i.checked = true
			i.mu.Unlock()
			if !announced {
				log.Info("resource not served; polling discovery until it is", "interval", i.opts.PollInterval)
				announced = true
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(i.opts.PollInterval):
		}
	}

	ns := i.opts.Namespace
	if !namespaced {
		ns = "" // a cluster-scoped resource has no namespaced path
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(i.opts.Dynamic, gvr, ns, 0,
		cache.Indexers{}, nil).Informer()
	if i.opts.Transform != nil {
		if err := inf.SetTransform(i.opts.Transform); err != nil {
			log.Error("informer transform", "err", err)
			return
		}
	}
	if len(i.opts.Indexers) > 0 {
		if err := inf.AddIndexers(i.opts.Indexers); err != nil {
			log.Error("informer indexers", "err", err)
			return
		}
	}
	if i.opts.Handler != nil {
		if _, err := inf.AddEventHandler(i.opts.Handler); err != nil {
			log.Error("informer handler", "err", err)
			return
		}
	}
	i.mu.Lock()
	i.informer, i.resource, i.kind, i.served, i.checked = inf, gvr, kind, true, true
	i.mu.Unlock()
	log.Info("resource served; starting informer", "resource", gvr.String())

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { inf.Run(ctx.Done()) })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	i.mu.Lock()
	i.synced = true
	i.mu.Unlock()
	log.Info("informer synced", "objects", len(inf.GetStore().ListKeys()))
	if i.opts.OnSynced != nil {
		i.opts.OnSynced(ctx)
	}
}

var errNotServed = errors.New("resource not served")

// discover returns the resource (its kind, whether it is namespaced) of
// the kind or resource name in the first version serving it, or
// errNotServed.
func (i *Informer) discover() (gvr schema.GroupVersionResource, kind string, namespaced bool, err error) {
	versions := append([]string{i.opts.GroupVersion.Version}, i.opts.FallbackVersions...)
	for _, v := range versions {
		gv := schema.GroupVersion{Group: i.opts.GroupVersion.Group, Version: v}
		list, err := i.opts.Discovery.ServerResourcesForGroupVersion(gv.String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return schema.GroupVersionResource{}, "", false, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			if (i.opts.Kind != "" && r.Kind == i.opts.Kind) || (i.opts.Resource != "" && r.Name == i.opts.Resource) {
				return gv.WithResource(r.Name), r.Kind, r.Namespaced, nil
			}
		}
	}
	return schema.GroupVersionResource{}, "", false, errNotServed
}

// EnqueueAll calls enqueue with the namespace and name of every object in
// the cache (nothing until the resource is served): what an OnSynced
// usually does.
func (i *Informer) EnqueueAll(enqueue func(namespace, name string)) int {
	idx := i.Indexer()
	if idx == nil {
		return 0
	}
	keys := idx.ListKeys()
	for _, k := range keys {
		if ns, name, err := cache.SplitMetaNamespaceKey(k); err == nil {
			enqueue(ns, name)
		}
	}
	return len(keys)
}
