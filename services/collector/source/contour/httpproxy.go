package contour

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Source is the contour-httpproxy source: one state per HTTPProxy.
type Source struct {
	opts    Options
	dynamic dynamic.Interface
	proxies *lazyinformer.Informer
	// resync is the collector's Runtime.Resync, set by Run before the
	// informer starts.
	resync func()
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	dyn, err := newDynamic(opts)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, dynamic: dyn, resync: func() {}}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: an HTTPProxy's change enqueues it;
// nothing else feeds its endpoints (its status carries the load balancer).
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.proxies, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: GroupVersion, Kind: "HTTPProxy",
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformHTTPProxy(s.opts.Filters.AnnotationKeys()),
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*HTTPProxy)
				c, _ := cur.(*HTTPProxy)
				if o != nil && c != nil && sameHTTPProxy(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.proxies.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return s.proxies.HasSynced, nil
}

// Run implements source.Runner: it runs the HTTPProxy informer once
// HTTPProxies are served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.proxies.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until HTTPProxies
// are served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	p, exists, err := source.Lookup[*HTTPProxy](s.proxies, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.HTTPProxyEndpoints(p)
	return eps, true, problems
}

// HTTPProxyEndpoints computes the endpoints of one HTTPProxy: its
// virtual host's fqdn and the hostname annotation, or the template when
// those gave none (or with --combine-fqdn-annotation), all at the target
// annotation's targets, else every IP and every hostname of the load
// balancer in its status.
func (s *Source) HTTPProxyEndpoints(p *HTTPProxy) ([]events.Endpoint, []error) {
	if !source.Controlled(p.Annotations) || !s.opts.Filters.Matches(p.Labels, p.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(p)
	if p.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", p.invalid)
	}
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		targets = s.loadBalancerTargets(p, in)
	}
	var names []string
	if fqdn := p.fqdn(); fqdn != "" {
		names = in.ValidHostnames([]string{fqdn}, "spec.virtualhost.fqdn", source.ReasonInvalidHostname)
	}
	if !s.opts.IgnoreHostnameAnnotation {
		names = append(names, in.Hostnames(source.AnnotationHostname)...)
	}
	if s.opts.FQDNTemplate != nil && (len(names) == 0 || s.opts.CombineFQDNAnnotation) {
		names = append(names, in.TemplateNames(s.opts.FQDNTemplate)...)
	}
	var set source.EndpointSet
	for _, n := range names {
		set.Add(n, targets...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

// loadBalancerTargets are the valid IPs and hostnames of the status's
// load balancer: both of an entry that has both, as ExternalDNS takes
// them.
func (s *Source) loadBalancerTargets(p *HTTPProxy, in *source.Inputs) []string {
	var out []string
	for _, lb := range p.Status.LoadBalancer.Ingress {
		for _, t := range []string{lb.IP, lb.Hostname} {
			if t == "" {
				continue
			}
			if err := source.ValidateTarget(t); err != nil {
				in.Problem(ReasonInvalidSpec, "status.loadBalancer.ingress", err)
				continue
			}
			out = append(out, t)
		}
	}
	return out
}
