// Package gloo holds the collector's gloo-proxy source: DNS names from the
// virtual hosts of Gloo Edge's gloo.solo.io Proxies, at the load balancer
// of the Proxy's Service (or of the Ingress its Gateway names), with the
// ttl and routing annotations of the gateway.solo.io VirtualServices each
// virtual host comes from, by the rules of ExternalDNS' gloo-proxy source
// (see README.md beside this file).
//
// Gloo's CRDs may be installed after the collector started: the source
// reads them through lazyinformer, which starts the informers when the
// resources appear.
package gloo

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
	"github.com/zonestream/zonestream/stage"
)

// Name is the --source name.
const Name = "gloo-proxy"

// DefaultNamespace is where Proxies are read unless --gloo-namespace
// names others, as in ExternalDNS.
const DefaultNamespace = "gloo-system"

// The Gloo APIs the source reads.
var (
	ProxyGroupVersion   = schema.GroupVersion{Group: "gloo.solo.io", Version: "v1"}
	GatewayGroupVersion = schema.GroupVersion{Group: "gateway.solo.io", Version: "v1"}
)

// Event reasons of the source besides the shared ones.
const (
	// ReasonInvalidSpec: the Proxy's spec does not have the shape of
	// Gloo's API.
	ReasonInvalidSpec = "InvalidSpec"
)

// Flags are the source's settings.
type Flags struct {
	// Namespaces are the namespaces Proxies are read in (--gloo-namespace,
	// repeatable; empty: DefaultNamespace).
	Namespaces stage.StringList
	// PollInterval is how often discovery is asked whether Gloo's
	// resources are served, while they are not (default
	// lazyinformer.DefaultPollInterval); not a flag.
	PollInterval time.Duration
}

// RegisterFlags adds the source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&f.Namespaces, "gloo-namespace", "gloo-proxy source: a namespace Gloo Proxies are read in, repeatable (default "+DefaultNamespace+")")
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
}

// Source is the gloo-proxy source: one state per Proxy.
type Source struct {
	opts       Options
	namespaces []string
	dynamic    dynamic.Interface

	proxies         *lazyinformer.Informer
	virtualServices *lazyinformer.Informer
	gateways        *lazyinformer.Informer
	services        corelisters.ServiceLister
	ingresses       networkinglisters.IngressLister
	// resync is the collector's Runtime.Resync, set by Run before the
	// lazy informers start.
	resync func()
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	dyn, err := opts.Dynamic("gloo-proxy")
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, namespaces: namespacesOf(opts.Flags), dynamic: dyn, resync: func() {}}, nil
}

// namespacesOf are the namespaces Proxies are read in, sorted, each once.
func namespacesOf(f Flags) []string {
	namespaces := slices.Compact(slices.Sorted(slices.Values(f.Namespaces)))
	if len(namespaces) == 0 {
		namespaces = []string{DefaultNamespace}
	}
	return namespaces
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// lazy returns a lazy informer for kind.
func (s *Source) lazy(gv schema.GroupVersion, kind, namespace string, transform cache.TransformFunc,
	indexers cache.Indexers, handler cache.ResourceEventHandler, onSynced func()) (*lazyinformer.Informer, error) {
	return lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: gv, Kind: kind,
		Namespace: namespace, PollInterval: s.opts.PollInterval,
		Transform: transform, Indexers: indexers, Handler: handler,
		OnSynced: func(context.Context) { onSynced() }, Logger: s.opts.Logger,
	})
}

// Register implements source.Source: see register.go.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	synced, err := s.register(factory, enqueue)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return synced, nil
}

// Run implements source.Runner: it runs the Proxy, VirtualService and
// Gateway informers once each is served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	var wg sync.WaitGroup
	for _, inf := range []*lazyinformer.Informer{s.proxies, s.virtualServices, s.gateways} {
		wg.Go(func() { inf.Run(ctx) })
	}
	wg.Wait()
}

// Endpoints implements source.Source; source.ErrUnknown until Proxies are
// served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	if !slices.Contains(s.namespaces, key.Namespace) {
		return nil, false, nil
	}
	p, exists, err := source.Lookup[*Proxy](s.proxies, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.ProxyEndpoints(p)
	return eps, true, problems
}
