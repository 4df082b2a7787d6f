package contour

import (
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/onekind"
)

// Source is the contour-httpproxy source: one state per HTTPProxy, read
// through onekind (a lazy informer, started once HTTPProxies are served).
type Source struct {
	*onekind.Source[*HTTPProxy]
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
	s.Source, err = onekind.New(onekind.Kind[*HTTPProxy]{
		Name: Name, GroupVersion: GroupVersion, Kind: "HTTPProxy",
		Transform: transformHTTPProxy(opts.Filters.AnnotationKeys()), Same: sameHTTPProxy, Endpoints: s.HTTPProxyEndpoints,
	}, onekind.Options{APIOptions: opts.APIOptions, Namespace: opts.Namespace, PollInterval: opts.PollInterval})
	return s, err
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
