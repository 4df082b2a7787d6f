package traefik

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Source is the traefik-proxy source: one state per IngressRoute,
// IngressRouteTCP and IngressRouteUDP of every API group read.
type Source struct {
	opts      Options
	dynamic   dynamic.Interface
	kinds     []Kind
	informers []*lazyinformer.Informer // one per kind, in kinds' order
	// resync is the collector's Runtime.Resync, set by Run before the
	// informers start.
	resync func()
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	dyn, err := opts.Dynamic(Name)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, dynamic: dyn, kinds: Kinds(opts.Flags), resync: func() {}}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: one lazy informer per kind; an
// object's change enqueues it, nothing else feeds its endpoints.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	keep := s.opts.Filters.AnnotationKeys()
	for _, k := range s.kinds {
		handle := func(obj any) {
			if key, err := source.KeyOf(obj); err == nil {
				enqueue(k.Key(key.Namespace, key.Name))
			}
		}
		var inf *lazyinformer.Informer
		inf, err := lazyinformer.New(lazyinformer.Options{
			Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: k.GroupVersion, Kind: k.Kind,
			Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval, Transform: transformRoute(keep),
			Handler: cache.ResourceEventHandlerFuncs{
				AddFunc: handle,
				UpdateFunc: func(old, cur any) {
					o, _ := old.(*Route)
					c, _ := cur.(*Route)
					if o != nil && c != nil && sameRoute(o, c) {
						return
					}
					handle(cur)
				},
				DeleteFunc: handle,
			},
			OnSynced: func(context.Context) {
				inf.EnqueueAll(func(ns, name string) { enqueue(k.Key(ns, name)) })
				s.resync()
			},
			Logger: s.opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		s.informers = append(s.informers, inf)
	}
	return func() bool {
		for _, inf := range s.informers {
			if !inf.HasSynced() {
				return false
			}
		}
		return true
	}, nil
}

// Run implements source.Runner: it runs each kind's informer once the
// kind is served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	var wg sync.WaitGroup
	for _, inf := range s.informers {
		wg.Go(func() { inf.Run(ctx) })
	}
	wg.Wait()
}

// Endpoints implements source.Source; source.ErrUnknown until the key's
// kind is served and synced. A key of a kind the flags no longer select
// does not exist: its records go, as they would from ExternalDNS.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	for i, k := range s.kinds {
		kind, objKey, ok := ParseKey(key, []Kind{k})
		if !ok {
			continue
		}
		r, exists, err := source.Lookup[*Route](s.informers[i], objKey)
		if err != nil {
			return nil, false, []error{err}
		}
		if !exists {
			return nil, false, nil
		}
		eps, problems := s.RouteEndpoints(kind, r)
		return eps, true, problems
	}
	return nil, false, nil
}

// RouteEndpoints computes the endpoints of one object of kind k: the
// hostname annotation's names and (but for UDP) the hosts of its routes'
// match rules at the target annotation's targets; or, when they give no
// record (or with --combine-fqdn-annotation), the name:target pairs of
// --fqdn-target-template and the --fqdn-template names (at
// --target-template's targets when given).
// Without a target annotation there is nothing to point at: no endpoints,
// as in ExternalDNS.
func (s *Source) RouteEndpoints(k Kind, r *Route) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(r.Labels, r.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(r)
	if r.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", r.invalid)
	}
	ttl := in.TTL()
	targets := in.Targets()
	var names []string
	if !s.opts.IgnoreHostnameAnnotation {
		names = in.Hostnames(source.AnnotationHostname)
	}
	if k.hostRules {
		for _, rule := range r.Spec.Routes {
			for _, h := range matchHosts(rule.Match) {
				names = append(names, in.ValidHostnames([]string{strings.TrimSuffix(h, ".")}, "spec.routes.match", source.ReasonInvalidHostname)...)
			}
		}
	}
	var set source.EndpointSet
	for _, n := range names {
		set.Add(n, targets...)
	}
	// As ExternalDNS v0.23's ApplyTemplates: --fqdn-target-template's
	// pairs, then the --fqdn-template names, each only while the object
	// has no record yet (or combine). The template names take
	// --target-template's targets when it is given, else the target
	// annotation's.
	in.AddTemplatePairs(s.opts.SharedOptions, &set)
	if s.opts.FQDNTemplate != nil && (set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		tt := targets
		if s.opts.TargetTemplate != nil {
			tt = in.TemplateTargets(s.opts.TargetTemplate)
		}
		for _, n := range in.TemplateNames(s.opts.FQDNTemplate) {
			set.Add(n, tt...)
		}
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}
