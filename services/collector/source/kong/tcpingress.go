package kong

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Source is the kong-tcpingress source: one state per TCPIngress.
type Source struct {
	opts      Options
	dynamic   dynamic.Interface
	ingresses *lazyinformer.Informer
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

// Register implements source.Source: a TCPIngress's change enqueues it;
// nothing else feeds its endpoints (its status carries the load
// balancer).
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.ingresses, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: GroupVersion, Kind: "TCPIngress",
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformTCPIngress(s.opts.Filters.AnnotationKeys()),
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*TCPIngress)
				c, _ := cur.(*TCPIngress)
				if o != nil && c != nil && sameTCPIngress(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.ingresses.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return s.ingresses.HasSynced, nil
}

// Run implements source.Runner: it runs the TCPIngress informer once
// TCPIngresses are served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.ingresses.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until
// TCPIngresses are served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	t, exists, err := source.Lookup[*TCPIngress](s.ingresses, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.TCPIngressEndpoints(t)
	return eps, true, problems
}

// TCPIngressEndpoints computes the endpoints of one TCPIngress: the
// hostname annotation's names and every rule's host, at the target
// annotation's targets, else every IP and every hostname of the load
// balancer in its status. As in ExternalDNS, the controller annotation is
// not read and there is no template.
func (s *Source) TCPIngressEndpoints(t *TCPIngress) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(t.Labels, t.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(t)
	if t.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", t.invalid)
	}
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		targets = loadBalancerTargets(t, in)
	}
	var names []string
	if !s.opts.IgnoreHostnameAnnotation {
		names = in.Hostnames(source.AnnotationHostname)
	}
	for _, r := range t.Spec.Rules {
		if h := strings.TrimSuffix(strings.TrimSpace(r.Host), "."); h != "" {
			names = append(names, in.ValidHostnames([]string{h}, "spec.rules.host", source.ReasonInvalidHostname)...)
		}
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
func loadBalancerTargets(t *TCPIngress, in *source.Inputs) []string {
	var out []string
	for _, lb := range t.Status.LoadBalancer.Ingress {
		for _, a := range []string{lb.IP, lb.Hostname} {
			if a == "" {
				continue
			}
			if err := source.ValidateTarget(a); err != nil {
				in.Problem(ReasonInvalidSpec, "status.loadBalancer.ingress", err)
				continue
			}
			out = append(out, a)
		}
	}
	return out
}
