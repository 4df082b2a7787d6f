package openshift

import (
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/onekind"
)

// admitted is the condition a router sets on its status.ingress entry
// once it serves the Route.
const admitted = "Admitted"

// Source is the openshift-route source: one state per Route, read
// through onekind (a lazy informer, started once Routes are served).
type Source struct {
	*onekind.Source[*Route]
	opts Options
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	s := &Source{opts: opts}
	var err error
	s.Source, err = onekind.New(onekind.Kind[*Route]{
		Name: Name, GroupVersion: GroupVersion, Kind: "Route",
		Transform: transformRoute(opts.Filters.AnnotationKeys()), Same: sameRoute, Endpoints: s.RouteEndpoints,
	}, onekind.Options{APIOptions: opts.APIOptions, Namespace: opts.Namespace, PollInterval: opts.PollInterval})
	return s, err
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
