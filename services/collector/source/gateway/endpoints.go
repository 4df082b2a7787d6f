package gateway

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// AnnotationDualstack (on a route, without prefix, see source.Annotation)
// set to "true" marks its endpoints with DualstackLabel.
const AnnotationDualstack = "dualstack"

// DualstackLabel is the endpoint label a route's dualstack annotation
// sets, ExternalDNS' (providers that make alias records create A and AAAA).
const DualstackLabel = "dualstack"

// Event reasons of this source (also the invalid-input metric's reason
// label), beside source.ReasonInvalidAnnotation and the others shared.
const (
	ReasonInvalidRoute   = "InvalidRoute"
	ReasonInvalidGateway = "InvalidGateway"
)

// RouteEndpoints computes the endpoints of one route from the Gateway and
// Namespace caches.
func (s *Source) RouteEndpoints(r route) ([]events.Endpoint, []error) {
	in := source.NewInputs(r)
	if !source.Controlled(in.Annotations) || !s.opts.Filters.Matches(r.GetLabels(), in.Annotations) {
		return nil, nil
	}
	ttl := in.TTL()
	// The route's own target annotation, when it has valid entries,
	// replaces the Gateways' targets.
	routeTargets := in.Targets()
	hosts := s.routeHosts(in, r)
	problems := &in.Problems

	hostTargets := map[string][]string{}
	_, st := routeParts(r)
	for _, parent := range st.Parents {
		att, ok := s.parentAttachment(r, parent, problems)
		if !ok {
			continue
		}
		// The route's target annotation, else a ListenerSet's, else the
		// Gateway's targets.
		targets := routeTargets
		if len(targets) == 0 {
			targets = att.targets
		}
		if len(targets) == 0 {
			targets = s.gatewayTargets(att.gw, problems)
		}
		for _, l := range s.listeners(r, att, parent.ParentRef) {
			lh := ""
			if l.Hostname != nil {
				lh = string(*l.Hostname)
			}
			for _, rh := range hosts {
				// Empty when neither the route nor the listener names anything.
				if h, ok := matchHost(lh, rh); ok && h != "" {
					hostTargets[h] = append(hostTargets[h], targets...)
				}
			}
		}
	}

	// Targets several listeners or Gateways share are merged: endpoints
	// are normalized (sorted, deduplicated).
	var set source.EndpointSet
	for h, ts := range hostTargets {
		set.Add(h, ts...)
	}
	eps := in.Routed(set.Endpoints(ttl))
	if v, _, ok := source.Annotation(in.Annotations, AnnotationDualstack); ok && strings.TrimSpace(v) == "true" {
		for i := range eps {
			eps[i].Labels = map[string]string{DualstackLabel: "true"}
		}
	}
	return eps, in.Problems
}

// routeHosts are the route's names: spec.hostnames, the hostname
// annotation, the --fqdn-template ones; or, when the route names nothing
// at all (an invalid name counts: it is reported, not replaced), the
// single empty name that takes each listener's hostname. The route's
// gateway-hostname-source annotation narrows them (hostnamesource.go).
func (s *Source) routeHosts(in *source.Inputs, r route) []string {
	only := hostnameSource(in)
	if only == HostnameSourceAnnotationOnly {
		if s.opts.IgnoreHostnameAnnotation {
			return nil
		}
		return in.Hostnames(source.AnnotationHostname)
	}
	specHosts, _ := routeParts(r)
	raw := make([]string, len(specHosts))
	for i, h := range specHosts {
		raw[i] = string(h)
	}
	given := len(raw) > 0
	hosts := in.ValidHostnames(raw, "spec.hostnames", source.ReasonInvalidHostname)
	if !s.opts.IgnoreHostnameAnnotation && only != HostnameSourceDefinedHostsOnly {
		if v, _, ok := source.Annotation(in.Annotations, source.AnnotationHostname); ok && len(source.SplitList(v)) > 0 {
			given = true
			hosts = append(hosts, in.Hostnames(source.AnnotationHostname)...)
		}
	}
	if s.opts.FQDNTemplate != nil && (!given || s.opts.CombineFQDNAnnotation) {
		names := in.TemplateNames(s.opts.FQDNTemplate)
		given = given || len(names) > 0
		hosts = append(hosts, names...)
	}
	if !given && only != HostnameSourceDefinedHostsOnly {
		return []string{""}
	}
	return hosts
}

// gatewayTargets are a Gateway's target annotation's valid entries, else
// its status.addresses; bad ones are reported on the Gateway.
func (s *Source) gatewayTargets(gw *gwv1.Gateway, problems *[]error) []string {
	in := source.NewInputs(gw)
	defer func() { *problems = append(*problems, in.Problems...) }()
	if ts := in.Targets(); len(ts) > 0 {
		return ts
	}
	var out []string
	for _, a := range gw.Status.Addresses {
		if err := source.ValidateTarget(a.Value); err != nil {
			in.Problem(ReasonInvalidGateway, "status.addresses", err)
			continue
		}
		out = append(out, a.Value)
	}
	return out
}

// attachment is what one status.parents entry attaches a route to: the
// listeners of a Gateway, or those of a ListenerSet on its Gateway.
type attachment struct {
	gw *gwv1.Gateway
	// owner is the namespace of the listeners' object: allowedRoutes
	// From=Same compares the route's with it.
	owner     string
	listeners []gwv1.Listener
	// targets are a ListenerSet's target annotation's, which replace its
	// Gateway's (none for a Gateway).
	targets []string
}

// parentAttachment returns what a status.parents entry attaches the route to,
// if it counts: a parentRef that the route's spec.parentRefs still names
// (a status outlives a parentRef removed from the spec until the Gateway's
// controller catches up; ExternalDNS reads none then), accepted, naming an
// existing Gateway (only those of --gateway-namespace are read) that passes
// --gateway-name and --gateway-label-filter, or, with
// --gateway-listener-sets, a ListenerSet on such a Gateway
// (listenerSetAttachment).
func (s *Source) parentAttachment(r route, parent gwv1.RouteParentStatus, problems *[]error) (attachment, bool) {
	kind, key, ok := parentKey(parent.ParentRef, r.GetNamespace())
	if !ok || !slices.ContainsFunc(parentRefs(r), func(ref gwv1.ParentReference) bool {
		k, rk, ok := parentKey(ref, r.GetNamespace())
		return ok && k == kind && rk == key
	}) {
		return attachment{}, false
	}
	if !accepted(parent.Conditions) {
		return attachment{}, false
	}
	if kind == ListenerSetKind {
		return s.listenerSetAttachment(r, key, problems)
	}
	gw, err := s.gateway(key)
	if err != nil {
		*problems = append(*problems, &source.Problem{Object: r, Reason: ReasonInvalidGateway, Field: "status.parents", Err: fmt.Errorf("Gateway %s: %w", key, err)})
		return attachment{}, false
	}
	if gw == nil {
		return attachment{}, false
	}
	return attachment{gw: gw, owner: gw.Namespace, listeners: gw.Spec.Listeners}, true
}

// listeners returns the listeners of att the route attaches to through
// ref: the one named by sectionName (all without), on ref's port if set,
// of a protocol the route kind uses, whose allowedRoutes admit the route.
func (s *Source) listeners(r route, att attachment, ref gwv1.ParentReference) []gwv1.Listener {
	var out []gwv1.Listener
	for _, l := range att.listeners {
		if ref.SectionName != nil && *ref.SectionName != "" && *ref.SectionName != l.Name {
			continue
		}
		if ref.Port != nil && *ref.Port != l.Port {
			continue
		}
		if !slices.Contains(s.kind.Protocols, l.Protocol) {
			continue
		}
		if !s.allowed(r, att.owner, l.AllowedRoutes) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// allowed applies a listener's allowedRoutes: the route's namespace (Same
// by default: owner's, the namespace of the listener's Gateway or
// ListenerSet; All; or Selector over the namespace's labels) and, when
// kinds are listed, the route's kind.
func (s *Source) allowed(r route, owner string, allow *gwv1.AllowedRoutes) bool {
	from := gwv1.NamespacesFromSame
	if allow != nil && allow.Namespaces != nil && allow.Namespaces.From != nil {
		from = *allow.Namespaces.From
	}
	switch from {
	case gwv1.NamespacesFromAll:
	case gwv1.NamespacesFromSame:
		if owner != r.GetNamespace() {
			return false
		}
	case gwv1.NamespacesFromSelector:
		if allow.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(allow.Namespaces.Selector)
		if err != nil {
			return false
		}
		nsLabels, ok := s.namespaceLabels(r.GetNamespace())
		if !ok || !sel.Matches(nsLabels) {
			return false
		}
	default:
		return false
	}
	if allow == nil || len(allow.Kinds) == 0 {
		return true
	}
	for _, k := range allow.Kinds {
		group := Group
		if k.Group != nil && *k.Group != "" {
			group = string(*k.Group)
		}
		if group == Group && string(k.Kind) == s.kind.Kind {
			return true
		}
	}
	return false
}
