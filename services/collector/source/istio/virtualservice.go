package istio

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// VirtualServiceName is the --source name of the VirtualService source.
const VirtualServiceName = "istio-virtualservice"

// meshGateway is the reserved gateway name of the sidecars: no DNS.
const meshGateway = "mesh"

// VirtualServiceSource is the istio-virtualservice source: one state per
// VirtualService.
type VirtualServiceSource struct {
	*base
	virtualServices *lazyinformer.Informer
}

var (
	_ source.Source = (*VirtualServiceSource)(nil)
	_ source.Runner = (*VirtualServiceSource)(nil)
)

// NewVirtualServiceSource validates the options and returns the source;
// it does no I/O.
func NewVirtualServiceSource(opts Options) (*VirtualServiceSource, error) {
	b, err := newBase(opts)
	if err != nil {
		return nil, err
	}
	return &VirtualServiceSource{base: b}, nil
}

// Name implements source.Source.
func (s *VirtualServiceSource) Name() string { return VirtualServiceName }

// gatewayRefs is the indexGatewayRef index function.
func gatewayRefs(obj any) ([]string, error) {
	v, ok := obj.(*VirtualService)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, ref := range v.Spec.Gateways {
		if ns, name, ok := parseGatewayRef(ref, v.Namespace); ok {
			keys = append(keys, ns+"/"+name)
		}
	}
	return keys, nil
}

// parseGatewayRef reads a spec.gateways entry: "[namespace/]name", the
// namespace defaulting to the VirtualService's. "mesh" and malformed
// entries give ok false.
func parseGatewayRef(ref, vsNamespace string) (namespace, name string, ok bool) {
	if ref == meshGateway {
		return "", "", false
	}
	ns, name, ok := splitHost(ref)
	if !ok || name == "" {
		return "", "", false
	}
	if ns == "" {
		ns = vsNamespace
	}
	return ns, name, true
}

// Register implements source.Source. A VirtualService's change enqueues
// it; a Gateway's change enqueues the VirtualServices naming it; a
// Service's change of selector or addresses enqueues the VirtualServices
// naming a Gateway that selects it. All through indexes.
func (s *VirtualServiceSource) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	keep := s.opts.Filters.AnnotationKeys()
	handle := source.EnqueueObject(enqueue)
	onSynced := func() {
		// Both caches are needed: recompute everything once either syncs.
		s.virtualServices.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
		s.resync()
	}
	var err error
	s.virtualServices, err = s.lazy("VirtualService", transformVirtualService(keep),
		cache.Indexers{indexGatewayRef: gatewayRefs},
		cache.ResourceEventHandlerFuncs{AddFunc: handle, UpdateFunc: func(_, cur any) { handle(cur) }, DeleteFunc: handle},
		onSynced)
	if err != nil {
		return nil, fmt.Errorf("istio-virtualservice: %w", err)
	}
	gatewayChanged := func(objs ...any) {
		for _, o := range objs {
			if g, ok := source.Unwrap(o).(*Gateway); ok {
				s.enqueueNaming(enqueue, g)
			}
		}
	}
	s.gateways, err = s.lazy("Gateway", transformGateway(keep),
		gatewayIndexers(),
		cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { gatewayChanged(obj) },
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Gateway)
				c, _ := cur.(*Gateway)
				if o != nil && c != nil && sameGateway(o, c) {
					return
				}
				gatewayChanged(cur)
			},
			DeleteFunc: func(obj any) { gatewayChanged(obj) },
		},
		onSynced)
	if err != nil {
		return nil, fmt.Errorf("istio-virtualservice: %w", err)
	}
	svcSynced, err := s.registerServices(factory, func(svcs ...*corev1.Service) {
		for _, g := range s.gatewaysSelecting(svcs...) {
			s.enqueueNaming(enqueue, g)
		}
	})
	if err != nil {
		return nil, err
	}
	ingSynced, err := s.registerIngresses(factory, func(gs []*Gateway) {
		for _, g := range gs {
			s.enqueueNaming(enqueue, g)
		}
	})
	if err != nil {
		return nil, err
	}
	return func() bool {
		return svcSynced() && ingSynced() && s.gateways.HasSynced() && s.virtualServices.HasSynced()
	}, nil
}

// enqueueNaming enqueues the VirtualServices that name Gateway g.
func (s *VirtualServiceSource) enqueueNaming(enqueue func(source.Key), g *Gateway) {
	idx := s.virtualServices.Indexer()
	if idx == nil {
		return
	}
	objs, _ := idx.ByIndex(indexGatewayRef, g.Namespace+"/"+g.Name)
	for _, o := range objs {
		if v, ok := o.(*VirtualService); ok {
			enqueue(source.Key{Namespace: v.Namespace, Name: v.Name})
		}
	}
}

// Run implements source.Runner: it runs the VirtualService and Gateway
// informers once they are served.
func (s *VirtualServiceSource) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	var wg sync.WaitGroup
	wg.Go(func() { s.virtualServices.Run(ctx) })
	wg.Go(func() { s.gateways.Run(ctx) })
	wg.Wait()
}

// Endpoints implements source.Source; source.ErrUnknown until both
// VirtualServices and Gateways are served and synced.
func (s *VirtualServiceSource) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	if !s.gateways.Served() {
		return nil, false, []error{source.ErrUnknown}
	}
	v, exists, err := source.Lookup[*VirtualService](s.virtualServices, key)
	if err != nil || !exists {
		return nil, exists, errs(err)
	}
	eps, problems := s.VirtualServiceEndpoints(v)
	return eps, true, problems
}

// VirtualServiceEndpoints computes the endpoints of one VirtualService.
func (s *VirtualServiceSource) VirtualServiceEndpoints(v *VirtualService) ([]events.Endpoint, []error) {
	if !source.Controlled(v.Annotations) || !s.opts.Filters.Matches(v.Labels, v.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(v)
	if v.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", v.invalid)
	}
	ttl := in.TTL()
	own := in.Targets()
	var gateways []*Gateway
	for _, ref := range v.Spec.Gateways {
		if ref == meshGateway {
			continue
		}
		ns, name, ok := parseGatewayRef(ref, v.Namespace)
		if !ok {
			in.Problem(ReasonInvalidGatewayReference, "spec.gateways", fmt.Errorf("%q is not [namespace/]name", ref))
			continue
		}
		if g, exists, _ := source.Lookup[*Gateway](s.gateways, source.Key{Namespace: ns, Name: name}); exists {
			gateways = append(gateways, g)
		}
	}
	// Each name gets the VirtualService's target annotation, else the
	// targets of the Gateways that admit it.
	targets := func(host string) []string {
		if len(own) > 0 {
			return own
		}
		var out []string
		for _, g := range gateways {
			if bindsTo(v, g, host) {
				out = append(out, s.gatewayTargets(g, nil)...)
			}
		}
		return out
	}
	var set source.EndpointSet
	for _, h := range s.names(in, v.Spec.Hosts, "spec.hosts") {
		set.Add(h, targets(h)...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

// bindsTo reports whether Gateway g serves host for VirtualService v, as
// Istio (and ExternalDNS) decide it: v must be exported to g's namespace
// (spec.exportTo, empty: everywhere), and a server host of g must admit
// v's namespace ("*", v's namespace, or "." for g's own) and match host
// ("*", equal, or a "*.suffix" wildcard).
func bindsTo(v *VirtualService, g *Gateway, host string) bool {
	if len(v.Spec.ExportTo) > 0 && !slices.ContainsFunc(v.Spec.ExportTo, func(ns string) bool {
		return ns == "*" || ns == g.Namespace || (ns == "." && g.Namespace == v.Namespace)
	}) {
		return false
	}
	for _, srv := range g.Spec.Servers {
		for _, h := range srv.Hosts {
			ns, name, ok := splitHost(h)
			if !ok {
				continue
			}
			if ns != "" && ns != "*" && ns != v.Namespace && !(ns == "." && v.Namespace == g.Namespace) {
				continue
			}
			if name == "*" || strings.EqualFold(name, host) ||
				(strings.HasPrefix(name, "*.") && strings.HasSuffix(strings.ToLower(host), strings.ToLower(name[1:]))) {
				return true
			}
		}
	}
	return false
}
