package istio

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// GatewayName is the --source name of the Gateway source.
const GatewayName = "istio-gateway"

// GatewaySource is the istio-gateway source: one state per Gateway.
type GatewaySource struct {
	*base
}

var (
	_ source.Source = (*GatewaySource)(nil)
	_ source.Runner = (*GatewaySource)(nil)
)

// NewGatewaySource validates the options and returns the source; it does
// no I/O.
func NewGatewaySource(opts Options) (*GatewaySource, error) {
	b, err := newBase(opts)
	if err != nil {
		return nil, err
	}
	return &GatewaySource{base: b}, nil
}

// Name implements source.Source.
func (s *GatewaySource) Name() string { return GatewayName }

// Register implements source.Source. A Gateway's change enqueues it; a
// Service's change of selector or addresses enqueues the Gateways
// selecting it (old and new selector), found by index.
func (s *GatewaySource) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.gateways, err = s.lazy("Gateway", transformGateway(s.opts.Filters.AnnotationKeys()),
		gatewayIndexers(),
		cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Gateway)
				c, _ := cur.(*Gateway)
				if o != nil && c != nil && sameGateway(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		func() {
			s.gateways.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		})
	if err != nil {
		return nil, fmt.Errorf("istio-gateway: %w", err)
	}
	svcSynced, err := s.registerServices(factory, func(svcs ...*corev1.Service) {
		for _, g := range s.gatewaysSelecting(svcs...) {
			enqueue(source.Key{Namespace: g.Namespace, Name: g.Name})
		}
	})
	if err != nil {
		return nil, err
	}
	ingSynced, err := s.registerIngresses(factory, func(gs []*Gateway) {
		for _, g := range gs {
			enqueue(source.Key{Namespace: g.Namespace, Name: g.Name})
		}
	})
	if err != nil {
		return nil, err
	}
	return func() bool { return svcSynced() && ingSynced() && s.gateways.HasSynced() }, nil
}

// Run implements source.Runner: it runs the Gateway informer once Istio's
// Gateways are served.
func (s *GatewaySource) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	var wg sync.WaitGroup
	wg.Go(func() { s.gateways.Run(ctx) })
	wg.Wait()
}

// Endpoints implements source.Source; source.ErrUnknown until Gateways
// are served and synced.
func (s *GatewaySource) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	g, exists, err := source.Lookup[*Gateway](s.gateways, key)
	if err != nil || !exists {
		return nil, exists, errs(err)
	}
	eps, problems := s.GatewayEndpoints(g)
	return eps, true, problems
}

// GatewayEndpoints computes the endpoints of one Gateway.
func (s *GatewaySource) GatewayEndpoints(g *Gateway) ([]events.Endpoint, []error) {
	if !source.Controlled(g.Annotations) || !s.opts.Filters.Matches(g.Labels, g.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(g)
	if g.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", g.invalid)
	}
	ttl := in.TTL()
	targets := s.gatewayTargets(g, in)
	var hosts []string
	for _, srv := range g.Spec.Servers {
		hosts = append(hosts, srv.Hosts...)
	}
	var set source.EndpointSet
	for _, h := range s.names(in, hosts, "spec.servers.hosts") {
		set.Add(h, targets...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}
