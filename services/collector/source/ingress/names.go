package ingress

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/zonestream/zonestream/services/collector/source"
)

// ingressNames gathers the endpoints of one Ingress and the problems met
// on the way.
type ingressNames struct {
	*source.Inputs
	s       *Source
	ing     *networkingv1.Ingress
	targets []string
	set     source.EndpointSet
}

// readTargets are the target annotation's valid entries, else the load
// balancer status'.
func (n *ingressNames) readTargets() []string {
	targets := n.Targets()
	if len(targets) > 0 {
		return targets
	}
	for _, lb := range n.ing.Status.LoadBalancer.Ingress {
		for _, t := range []string{lb.IP, lb.Hostname} {
			if t == "" {
				continue
			}
			if err := source.ValidateTarget(t); err != nil {
				n.Problem(ReasonInvalidHostname, "status.loadBalancer.ingress", err)
				continue
			}
			targets = append(targets, t)
		}
	}
	return targets
}

// hostnameSources says which names are taken: spec.rules and spec.tls
// ("defined hosts"), the hostname annotation, as narrowed by the
// ingress-hostname-source annotation.
func (n *ingressNames) hostnameSources() (defined, annotated bool) {
	defined, annotated = true, !n.s.opts.IgnoreHostnameAnnotation
	v, k, ok := source.Annotation(n.ing.Annotations, AnnotationHostnameSource)
	if !ok {
		return defined, annotated
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case HostnameSourceDefinedHostsOnly:
		return defined, false
	case HostnameSourceAnnotationOnly:
		return false, annotated
	}
	// ExternalDNS takes no defined-host nor annotation name then.
	n.Problem(ReasonInvalidAnnotation, k, fmt.Errorf("unknown value %q (known: %s, %s); no rule, tls or hostname annotation name is used",
		v, HostnameSourceDefinedHostsOnly, HostnameSourceAnnotationOnly))
	return false, false
}

// add gives name h the Ingress' targets; an invalid name is a problem of
// field.
func (n *ingressNames) add(h, field, reason string) {
	h = strings.TrimSuffix(strings.TrimSpace(h), ".")
	if h == "" {
		return
	}
	if err := source.ValidateHostname(h, true); err != nil {
		n.Problem(reason, field, err)
		return
	}
	n.set.Add(h, n.targets...)
}

// addDefined adds the hosts of spec.rules and spec.tls, unless ignored.
func (n *ingressNames) addDefined() {
	if !n.s.opts.IgnoreRulesSpec {
		for _, r := range n.ing.Spec.Rules {
			n.add(r.Host, "spec.rules.host", ReasonInvalidHostname)
		}
	}
	if !n.s.opts.IgnoreTLSSpec {
		for _, t := range n.ing.Spec.TLS {
			for _, h := range t.Hosts {
				n.add(h, "spec.tls.hosts", ReasonInvalidHostname)
			}
		}
	}
}

// addAnnotated adds the hostname annotation's names.
func (n *ingressNames) addAnnotated() {
	if v, k, ok := source.Annotation(n.ing.Annotations, AnnotationHostname); ok {
		for _, h := range source.SplitList(v) {
			n.add(h, k, ReasonInvalidAnnotation)
		}
	}
}

// addTemplated adds the names --fqdn-template gives.
func (n *ingressNames) addTemplated() {
	hosts, err := source.ExecFQDNTemplate(n.s.opts.FQDNTemplate, n.ing)
	if err != nil {
		n.Problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
	}
	for _, h := range hosts {
		n.add(h, "--fqdn-template", ReasonFQDNTemplateFailed)
	}
}
