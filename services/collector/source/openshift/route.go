package openshift

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

// admitted is the condition a router sets on its status.ingress entry
// once it serves the Route.
const admitted = "Admitted"

// Source is the openshift-route source: one state per Route.
type Source struct {
	opts    Options
	dynamic dynamic.Interface
	routes  *lazyinformer.Informer
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

// Register implements source.Source: a Route's change enqueues it; nothing
// else feeds its endpoints.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.routes, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: GroupVersion, Kind: "Route",
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformRoute(s.opts.Filters.AnnotationKeys()),
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
			s.routes.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return s.routes.HasSynced, nil
}

// Run implements source.Runner: it runs the Route informer once Routes are
// served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.routes.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until Routes are
// served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	r, exists, err := source.Lookup[*Route](s.routes, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.RouteEndpoints(r)
	return eps, true, problems
}

// RouteEndpoints computes the endpoints of one Route: the host of the
// router's verdict it is taken from, the hostname annotation, the template
// when those gave none (or with --combine-fqdn-annotation); all at the
// target annotation's targets, else the router's canonical hostname.
func (s *Source) RouteEndpoints(r *Route) ([]events.Endpoint, []error) {
	if !source.Controlled(r.Annotations) || !s.opts.Filters.Matches(r.Labels, r.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(r)
	if r.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", r.invalid)
	}
	ttl := in.TTL()
	host, routerTarget := s.admittedBy(r)
	targets := in.Targets()
	if len(targets) == 0 && routerTarget != "" {
		if err := source.ValidateTarget(routerTarget); err != nil {
			in.Problem(ReasonInvalidSpec, "status.ingress.routerCanonicalHostname", err)
		} else {
			targets = []string{routerTarget}
		}
	}
	var names []string
	if host != "" {
		names = in.ValidHostnames([]string{host}, "status.ingress.host", source.ReasonInvalidHostname)
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

// admittedBy returns the host and router canonical hostname of the first
// status.ingress entry of a router that admitted the Route and has a
// canonical hostname (of --openshift-router-name's router when set).
func (s *Source) admittedBy(r *Route) (host, target string) {
	for _, ing := range r.Status.Ingress {
		if ing.RouterCanonicalHostname == "" || !isAdmitted(ing) {
			continue
		}
		if s.opts.RouterName == "" || s.opts.RouterName == ing.RouterName {
			return ing.Host, ing.RouterCanonicalHostname
		}
	}
	return "", ""
}

// isAdmitted reports whether the router's Admitted condition is True.
func isAdmitted(ing RouteIngress) bool {
	for _, c := range ing.Conditions {
		if c.Type == admitted {
			return c.Status == "True"
		}
	}
	return false
}
