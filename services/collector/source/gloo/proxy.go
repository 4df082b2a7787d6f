package gloo

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// AnnotationIngress on a Gateway names an Ingress, "[namespace/]name"
// (namespace default: the Gateway's), whose load balancer gives the
// targets of the Proxies made from the Gateway, as in ExternalDNS.
const AnnotationIngress = "ingress"

// ProxyEndpoints computes the endpoints of one Proxy, as ExternalDNS'
// gloo-proxy source does:
//
//   - targets: the Proxy's target annotation; else the load balancer
//     (IP, else hostname) of the Ingress named by the ingress annotation
//     of each Gateway its listeners come from; else, when the Service of
//     the Proxy's name and namespace is a LoadBalancer, each load
//     balancer entry's IP and hostname;
//   - names: every domain of every virtual host, with the ttl,
//     set-identifier and provider-specific annotations of the
//     VirtualServices the virtual host comes from;
//   - no filter, no controller annotation, no template.
//
// A Gateway, Ingress, VirtualService or Service that the Proxy names but
// is not there makes the Proxy's state unknown (ExternalDNS fails the
// whole run then): the last published state is kept, and the collector
// logs why.
func (s *Source) ProxyEndpoints(p *Proxy) ([]events.Endpoint, []error) {
	in := source.NewInputs(p)
	if p.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", p.invalid)
	}
	targets := in.Targets()
	if len(targets) == 0 {
		var err error
		if targets, err = s.gatewayIngressTargets(p); err != nil {
			return nil, []error{err}
		}
	}
	if len(targets) == 0 {
		var err error
		if targets, err = s.serviceTargets(p); err != nil {
			return nil, []error{err}
		}
	}
	var all []events.Endpoint
	for _, l := range p.Spec.Listeners {
		for _, vh := range l.HTTPListener.VirtualHosts {
			ann, err := s.virtualServiceAnnotations(vh)
			if err != nil {
				return nil, []error{err}
			}
			vin := &source.Inputs{Object: p, Annotations: ann}
			ttl := vin.TTL()
			var set source.EndpointSet
			for _, d := range vh.Domains {
				d = strings.TrimSuffix(strings.TrimSpace(d), ".")
				if d == "" || d == "*" {
					continue
				}
				for _, n := range vin.ValidHostnames([]string{d}, "spec.listeners.httpListener.virtualHosts.domains", source.ReasonInvalidHostname) {
					set.Add(n, targets...)
				}
			}
			all = append(all, vin.Routed(set.Endpoints(ttl))...)
			in.Problems = append(in.Problems, vin.Problems...)
		}
	}
	return merge(all), in.Problems
}

// unknown is a lookup that failed: the Proxy's state cannot be told.
func unknown(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{source.ErrUnknown}, args...)...)
}

// gatewayIngressTargets are the targets of the Ingresses the Proxy's
// Gateways name.
func (s *Source) gatewayIngressTargets(p *Proxy) ([]string, error) {
	var out []string
	for _, l := range p.Spec.Listeners {
		for _, ref := range l.MetadataStatic.refs(kindGateway) {
			g, exists, err := source.Lookup[*Meta](s.gateways, keyOf(ref))
			if err != nil {
				return nil, err
			}
			if !exists {
				return nil, unknown("gateway %s of proxy %s/%s not found", ref, p.Namespace, p.Name)
			}
			key, ok, err := ingressRef(g)
			if err != nil {
				return nil, unknown("gateway %s: %v", ref, err)
			}
			if !ok {
				continue
			}
			ns, name, _ := strings.Cut(key, "/")
			ing, err := s.ingresses.Ingresses(ns).Get(name)
			if err != nil {
				return nil, unknown("ingress %s of gateway %s: %v", key, ref, err)
			}
			for _, lb := range ing.Status.LoadBalancer.Ingress {
				switch {
				case lb.IP != "":
					out = append(out, lb.IP)
				case lb.Hostname != "":
					out = append(out, lb.Hostname)
				}
			}
		}
	}
	return out, nil
}

// serviceTargets are the load balancer addresses of the Service of the
// Proxy's name, when it is a LoadBalancer.
func (s *Source) serviceTargets(p *Proxy) ([]string, error) {
	svc, err := s.services.Services(p.Namespace).Get(p.Name)
	if apierrors.IsNotFound(err) {
		return nil, unknown("service %s/%s of the proxy not found", p.Namespace, p.Name)
	}
	if err != nil {
		return nil, unknown("service %s/%s: %v", p.Namespace, p.Name, err)
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil, nil
	}
	var out []string
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			out = append(out, lb.IP)
		}
		if lb.Hostname != "" {
			out = append(out, lb.Hostname)
		}
	}
	return out, nil
}

// virtualServiceAnnotations are the annotations of the VirtualServices a
// virtual host comes from, the later ones winning.
func (s *Source) virtualServiceAnnotations(vh VirtualHost) (map[string]string, error) {
	ann := map[string]string{}
	for _, ref := range vh.refs(kindVirtualService) {
		vs, exists, err := source.Lookup[*Meta](s.virtualServices, keyOf(ref))
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, unknown("virtual service %s not found", ref)
		}
		maps.Copy(ann, vs.Annotations)
	}
	return ann, nil
}

// ingressRef reads a Gateway's ingress annotation; ok is false when it is
// absent or empty.
func ingressRef(g *Meta) (key string, ok bool, err error) {
	v, _, present := source.Annotation(g.Annotations, AnnotationIngress)
	v = strings.TrimSpace(v)
	if !present || v == "" {
		return "", false, nil
	}
	ns, name, found := strings.Cut(v, "/")
	if !found {
		ns, name = g.Namespace, v
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", true, fmt.Errorf("ingress annotation %q is not [namespace/]name", v)
	}
	return ns + "/" + name, true, nil
}

func keyOf(ref string) source.Key {
	ns, name, _ := strings.Cut(ref, "/")
	return source.Key{Namespace: ns, Name: name}
}

// merge joins the endpoints of the same name, type and set identifier
// (two virtual hosts with one domain), as ExternalDNS' MergeEndpoints:
// the first one's ttl and properties, every target once.
func merge(eps []events.Endpoint) []events.Endpoint {
	type key struct{ name, typ, id string }
	at := map[key]int{}
	var out []events.Endpoint
	for _, e := range eps {
		k := key{e.DNSName, e.RecordType, e.SetIdentifier}
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			out = append(out, e)
			continue
		}
		out[i].Targets = append(slices.Clone(out[i].Targets), e.Targets...)
		out[i].Normalize() // sorts and drops the duplicates
	}
	events.SortEndpoints(out)
	return out
}
