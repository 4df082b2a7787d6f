package service

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// serviceNames gathers the endpoints of one Service and the problems met
// on the way.
type serviceNames struct {
	*source.Inputs
	s   *Source
	svc *corev1.Service
	set source.EndpointSet
	// override holds the target annotation's valid targets, which, when
	// there is one, replace those the Service's type would give.
	override []string
	// The targets of a headless or NodePort Service (from Pods,
	// EndpointSlices, Nodes) and of a LoadBalancer, computed once.
	dependent, lb *typeTargets
}

// targets are the targets of a name of the Service.
func (n *serviceNames) targets(useClusterIP bool) *typeTargets {
	if len(n.override) > 0 {
		return &typeTargets{targets: n.override}
	}
	svc := n.svc
	switch {
	case svc.Spec.Type == corev1.ServiceTypeLoadBalancer && !useClusterIP:
		if n.lb == nil {
			n.lb = &typeTargets{targets: n.s.loadBalancerTargets(svc, &n.Problems)}
		}
		return n.lb
	case isHeadless(svc):
		if n.dependent == nil {
			n.dependent = n.s.headlessTargets(svc, &n.Problems)
		}
		return n.dependent
	case svc.Spec.Type == corev1.ServiceTypeNodePort:
		if n.dependent == nil {
			n.dependent = n.s.nodePortTargets(svc, &n.Problems)
		}
		return n.dependent
	}
	return &typeTargets{targets: n.s.targets(svc, useClusterIP)}
}

// add gives name h its targets, and the per-Pod names and SRV records
// they bring.
func (n *serviceNames) add(h string, tt *typeTargets) {
	n.set.Add(h, tt.targets...)
	for _, p := range tt.pods {
		if len(p.targets) == 0 {
			continue
		}
		name := p.hostname + "." + h
		if err := source.ValidateHostname(name, false); err != nil {
			n.Problems = append(n.Problems, &source.Problem{Object: p.pod, Reason: ReasonInvalidHostname, Field: "spec.hostname",
				Err: fmt.Errorf("per-Pod name of headless Service %s: %w", n.svc.Name, err)})
			continue
		}
		n.set.Add(name, p.targets...)
	}
	if !n.s.srv {
		return
	}
	for _, port := range tt.srv {
		name := "_" + n.svc.Name + "._" + port.protocol + "." + h
		if err := source.ValidateHostname(name, false); err != nil {
			n.Problem(ReasonInvalidHostname, "SRV record", err)
			continue
		}
		n.set.AddRecord(name, events.RecordTypeSRV, fmt.Sprintf("0 50 %d %s", port.nodePort, events.NormalizeName(h)))
	}
}

// addAnnotated adds the names of the hostname annotations; the internal
// one's get the cluster IP.
func (n *serviceNames) addAnnotated() {
	for _, a := range []struct {
		key          string
		useClusterIP bool
	}{{AnnotationHostname, false}, {AnnotationInternalHostname, true}} {
		v, k, ok := source.Annotation(n.svc.Annotations, a.key)
		if !ok {
			continue
		}
		for _, h := range source.SplitList(v) {
			if err := source.ValidateHostname(h, true); err != nil {
				n.Problem(ReasonInvalidAnnotation, k, err)
				continue
			}
			n.add(h, n.targets(a.useClusterIP))
		}
	}
}

// addTemplated adds the names --fqdn-template gives.
func (n *serviceNames) addTemplated() {
	names, err := source.ExecFQDNTemplate(n.s.opts.FQDNTemplate, n.svc)
	if err != nil {
		n.Problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
	}
	for _, h := range names {
		if err := source.ValidateHostname(h, true); err != nil {
			n.Problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
			continue
		}
		n.add(h, n.targets(false))
	}
}
