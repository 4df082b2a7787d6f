package kong

import (
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/onekind"
)

// Source is the kong-tcpingress source: one state per TCPIngress, read
// through onekind (a lazy informer, started once TCPIngresses are served).
type Source struct {
	*onekind.Source[*TCPIngress]
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
	s.Source, err = onekind.New(onekind.Kind[*TCPIngress]{
		Name: Name, GroupVersion: GroupVersion, Kind: "TCPIngress",
		Transform: transformTCPIngress(opts.Filters.AnnotationKeys()), Same: sameTCPIngress, Endpoints: s.TCPIngressEndpoints,
	}, onekind.Options{APIOptions: opts.APIOptions, Namespace: opts.Namespace, PollInterval: opts.PollInterval})
	return s, err
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
