package skipper

import (
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// RouteGroupEndpoints computes the endpoints of one RouteGroup, as
// ExternalDNS' skipper-routegroup source does:
//
//   - only the annotation filter selects (not --label-filter); a
//     controller annotation other than dns-controller leaves it alone;
//   - names: every non-empty spec.hosts entry and the hostname
//     annotation (unless --ignore-hostname-annotation); the template when
//     those gave none, or with --combine-fqdn-annotation;
//   - targets: the target annotation, else every status load balancer
//     entry's IP and hostname;
//   - ttl, set-identifier and the provider-specific annotations apply.
func (s *Source) RouteGroupEndpoints(rg *RouteGroup) ([]events.Endpoint, []error) {
	if !source.Controlled(rg.Annotations) || !(source.Filters{Annotations: s.opts.Filters.Annotations}).Matches(nil, rg.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(rg)
	if rg.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", rg.invalid)
	}
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		for _, lb := range rg.Status.LoadBalancer.entries() {
			if lb.IP != "" {
				targets = append(targets, lb.IP)
			}
			if lb.Hostname != "" {
				targets = append(targets, lb.Hostname)
			}
		}
	}
	var set source.EndpointSet
	for _, n := range s.names(in, rg) {
		set.Add(n, targets...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

func (s *Source) names(in *source.Inputs, rg *RouteGroup) []string {
	var names []string
	for _, h := range rg.Spec.Hosts {
		h = strings.TrimSuffix(strings.TrimSpace(h), ".")
		if h != "" {
			names = append(names, in.ValidHostnames([]string{h}, "spec.hosts", source.ReasonInvalidHostname)...)
		}
	}
	if !s.opts.IgnoreHostnameAnnotation {
		names = append(names, in.Hostnames(source.AnnotationHostname)...)
	}
	if s.opts.FQDNTemplate != nil && (len(names) == 0 || s.opts.CombineFQDNAnnotation) {
		names = append(names, in.TemplateNames(s.opts.FQDNTemplate)...)
	}
	return names
}
