// Package gateway is the collector's Gateway API source: the DNS endpoints
// of HTTPRoutes, GRPCRoutes, TLSRoutes, TCPRoutes and UDPRoutes
// (gateway.networking.k8s.io/v1), by the rules of ExternalDNS' gateway-*
// sources (see README.md beside this file). One package serves the five
// kinds; a Source is made for one Kind.
//
// Gateways and routes are read through lazyinformers, so a collector
// started before the Gateway API CRDs are installed picks them up once
// they are, without a restart. Routes are indexed by the Gateways in their
// status.parents: a change of a Gateway recomputes exactly its routes, and
// a change of a Namespace's labels exactly the routes of that namespace
// attached to a Gateway whose listeners select namespaces by label.
package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Flags are the flags the gateway-* sources share.
type Flags struct {
	// Name limits the Gateways routes may attach to to those of this name,
	// in any namespace; empty: all (--gateway-name).
	Name string
	// Namespace limits the Gateways routes may attach to to one
	// namespace; empty: all (--gateway-namespace).
	Namespace string
	// LabelFilter selects the Gateways routes may attach to
	// (--gateway-label-filter).
	LabelFilter string
	// ListenerSets reads ListenerSets: routes attached to one get its
	// listeners on its parent Gateway (--gateway-listener-sets).
	ListenerSets bool
	// PollInterval is how often discovery is polled while the Gateway API
	// is not served (default 10s; no flag).
	PollInterval time.Duration
}

// RegisterFlags adds the gateway sources' flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Name, "gateway-name", "", "Gateway sources: only use Gateways of this name (in any namespace); empty: all")
	fs.StringVar(&f.Namespace, "gateway-namespace", "", "Gateway sources: only use Gateways of this namespace; empty: all")
	fs.BoolVar(&f.ListenerSets, "gateway-listener-sets", false, "Gateway sources: read ListenerSets (gateway.networking.k8s.io/v1, Gateway API v1.5+): a route attached to one gets its listeners on its parent Gateway")
	fs.StringVar(&f.LabelFilter, "gateway-label-filter", "", "Gateway sources: only use Gateways whose labels match this label selector")
}

// Options configure a gateway source.
type Options struct {
	Flags
	// SharedOptions: the filters apply to routes.
	source.SharedOptions
	source.APIOptions
	// Namespace limits the routes to one namespace; empty: all.
	Namespace string
}

// Source is the source of one route kind.
type Source struct {
	kind     Kind
	opts     Options
	gwLabels labels.Selector
	dynamic  dynamic.Interface
	enqueue  func(source.Key)
	gateways *lazyinformer.Informer
	routes   *lazyinformer.Informer
	nsLister corelisters.NamespaceLister
	// listenerSets is nil without --gateway-listener-sets.
	listenerSets *lazyinformer.Informer
	// Closed by the informers' OnSynced.
	gatewaysSynced, routesSynced, listenerSetsSynced chan struct{}
}

var _ source.Source = (*Source)(nil)
var _ source.Runner = (*Source)(nil)

// New validates the options and returns the source of kind k; it does no
// I/O.
func New(k Kind, opts Options) (*Source, error) {
	s := &Source{kind: k, opts: opts}
	var err error
	if s.gwLabels, err = labels.Parse(opts.LabelFilter); err != nil {
		return nil, fmt.Errorf("--gateway-label-filter %q: %w", opts.LabelFilter, err)
	}
	if opts.RESTConfig != nil {
		if s.dynamic, err = dynamic.NewForConfig(opts.RESTConfig); err != nil {
			return nil, fmt.Errorf("%s source: dynamic client: %w", k.Source, err)
		}
	}
	return s, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return s.kind.Source }

// Register implements source.Source: a Namespace informer from the shared
// factory (for allowedRoutes selectors), and lazyinformers for Gateways
// and for the routes, started by Run. It counts as synced once all three
// are (a lazyinformer whose resource is not served counts as synced: its
// objects are answered source.ErrUnknown).
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	if s.dynamic == nil || s.opts.Client == nil {
		return nil, fmt.Errorf("%s source: no API server client", s.kind.Source)
	}
	s.enqueue = enqueue
	keep := s.opts.Filters.AnnotationKeys()
	s.gatewaysSynced, s.routesSynced = make(chan struct{}), make(chan struct{})
	common := lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic,
		GroupVersion: GroupVersion, PollInterval: s.opts.PollInterval, Logger: s.opts.Logger,
	}

	gw := common
	gw.Kind, gw.Namespace, gw.FallbackVersions = "Gateway", s.opts.Flags.Namespace, gatewayFallbackVersions
	gw.OnSynced = func(context.Context) { close(s.gatewaysSynced) }
	gw.Transform = gatewayTransform(nil)
	gw.Handler = cache.ResourceEventHandlerFuncs{
		AddFunc: s.gatewayChanged,
		UpdateFunc: func(old, obj any) {
			if gatewayDiffers(old, obj) {
				s.gatewayChanged(obj)
			}
		},
		DeleteFunc: s.gatewayChanged,
	}
	var err error
	if s.gateways, err = lazyinformer.New(gw); err != nil {
		return nil, err
	}

	if s.opts.Flags.ListenerSets {
		s.listenerSetsSynced = make(chan struct{})
		if s.listenerSets, err = s.newListenerSetInformer(common, keep); err != nil {
			return nil, err
		}
	}

	rt := common
	rt.Kind, rt.Namespace, rt.FallbackVersions = s.kind.Kind, s.opts.Namespace, s.kind.FallbackVersions
	rt.OnSynced = func(context.Context) { close(s.routesSynced) }
	rt.Transform = routeTransform(s.kind, keep)
	rt.Indexers = cache.Indexers{indexParent: parentKeys, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	handle := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			enqueue(k)
		}
	}
	rt.Handler = cache.ResourceEventHandlerFuncs{
		AddFunc: handle, UpdateFunc: func(_, obj any) { handle(obj) }, DeleteFunc: handle,
	}
	if s.routes, err = lazyinformer.New(rt); err != nil {
		return nil, err
	}

	ns := factory.Core().V1().Namespaces()
	if err := ns.Informer().SetTransform(namespaceTransform); err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	s.nsLister = ns.Lister()
	reg, err := ns.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: s.namespaceChanged,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Namespace)
			n, ok2 := obj.(*corev1.Namespace)
			if !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Labels, n.Labels) {
				s.namespaceChanged(obj)
			}
		},
		DeleteFunc: s.namespaceChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	return func() bool {
		return reg.HasSynced() && s.gateways.HasSynced() && s.routes.HasSynced() &&
			(s.listenerSets == nil || s.listenerSets.HasSynced())
	}, nil
}

// Run implements source.Runner: it runs both informers and, once both have
// synced (whenever the CRDs appear), computes every route again, and every
// route published before, so that the ones deleted while the Gateway API
// was not served get their tombstone.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.gateways.Run(ctx) })
	wg.Go(func() { s.routes.Run(ctx) })
	if s.listenerSets != nil {
		wg.Go(func() { s.listenerSets.Run(ctx) })
		// Routes attached to ListenerSets were unknown until then: compute
		// every route again once ListenerSets are served and synced
		// (whenever their CRD appears).
		wg.Go(func() {
			select {
			case <-ctx.Done():
			case <-s.listenerSetsSynced:
				s.routes.EnqueueAll(func(ns, name string) { rt.Enqueue(source.Key{Namespace: ns, Name: name}) })
			}
		})
	}
	for _, synced := range []chan struct{}{s.gatewaysSynced, s.routesSynced} {
		select {
		case <-ctx.Done():
			return
		case <-synced:
		}
	}
	n := s.routes.EnqueueAll(func(ns, name string) { rt.Enqueue(source.Key{Namespace: ns, Name: name}) })
	rt.Resync()
	rt.Logger.Info("Gateways and routes synced", "kind", s.kind.Kind, "routes", n)
}

// Endpoints implements source.Source. Until both Gateways and routes are
// served and synced, every key is answered source.ErrUnknown: nothing is
// published, above all no tombstone because the CRDs are missing.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	if !s.gateways.Served() {
		return nil, false, []error{source.ErrUnknown}
	}
	obj, exists, err := source.Lookup[any](s.routes, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	r, ok := obj.(route)
	if !ok || isUnstructured(obj) {
		return nil, true, []error{&source.Problem{Object: runtimeObject(obj), Reason: ReasonInvalidRoute,
			Err: fmt.Errorf("%s %s does not decode as %s", s.kind.Kind, key, GroupVersion.WithKind(s.kind.Kind))}}
	}
	// A ListenerSet parent's listeners are unknown until ListenerSets
	// are served and synced.
	if s.listenerSets != nil && !s.listenerSets.Served() && hasListenerSetParent(r) {
		return nil, false, []error{source.ErrUnknown}
	}
	eps, problems := s.RouteEndpoints(r)
	return eps, true, problems
}

// gateway returns the Gateway namespace/name if it exists and passes
// --gateway-name and --gateway-label-filter (--gateway-namespace limits
// the informer).
func (s *Source) gateway(key string) (*gwv1.Gateway, error) {
	if !s.namedGateway(key) {
		return nil, nil
	}
	obj, exists, err := s.gateways.Indexer().GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	gw, ok := obj.(*gwv1.Gateway)
	if !ok {
		return nil, errors.New("does not decode as a " + GroupVersion.WithKind("Gateway").String())
	}
	if !s.gwLabels.Matches(labels.Set(gw.Labels)) {
		return nil, nil
	}
	return gw, nil
}

// namedGateway reports whether the Gateway key (namespace/name) passes
// --gateway-name, which names a Gateway in any namespace, as ExternalDNS'.
func (s *Source) namedGateway(key string) bool {
	if s.opts.Flags.Name == "" {
		return true
	}
	_, name, _ := strings.Cut(key, "/")
	return name == s.opts.Flags.Name
}

// namespaceLabels returns the labels of a namespace, false if unknown.
func (s *Source) namespaceLabels(name string) (labels.Set, bool) {
	ns, err := s.nsLister.Get(name)
	if apierrors.IsNotFound(err) || err != nil {
		return nil, false
	}
	return labels.Set(ns.Labels), true
}
