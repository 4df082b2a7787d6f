package ambassador

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// HostEndpoints computes the endpoints of one Host: spec.hostname at the
// target annotation's targets, else at the named Service's. As in
// ExternalDNS, a Host without the ambassador-service annotation wants
// nothing, and neither the hostname annotation nor --fqdn-template apply.
func (s *Source) HostEndpoints(h *Host) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(h.Labels, h.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(h)
	if h.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", h.invalid)
	}
	svcKey, annotated, err := serviceRef(h)
	if !annotated {
		return nil, in.Problems
	}
	if err != nil {
		in.Problem(ReasonInvalidServiceReference, AnnotationService, err)
		return nil, in.Problems
	}
	name := strings.TrimSuffix(strings.TrimSpace(h.Spec.Hostname), ".")
	if name == "" || name == "*" {
		return nil, in.Problems
	}
	names := in.ValidHostnames([]string{name}, "spec.hostname", source.ReasonInvalidHostname)
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		targets = s.targetsOf(svcKey, in)
	}
	var set source.EndpointSet
	for _, n := range names {
		set.Add(n, targets...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

// targetsOf are the targets of the Service "namespace/name"; a Service
// that is not there is reported.
func (s *Source) targetsOf(key string, in *source.Inputs) []string {
	ns, name, _ := strings.Cut(key, "/")
	if s.opts.Namespace != "" && ns != s.opts.Namespace {
		in.Problem(ReasonServiceNotFound, AnnotationService,
			fmt.Errorf("service %s is outside --namespace=%s, where the collector does not look", key, s.opts.Namespace))
		return nil
	}
	svc, err := s.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		in.Problem(ReasonServiceNotFound, AnnotationService, fmt.Errorf("service %s not found", key))
		return nil
	}
	if err != nil {
		in.Problem(ReasonServiceNotFound, AnnotationService, err)
		return nil
	}
	return serviceTargets(svc)
}
