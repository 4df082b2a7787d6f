package ambassador

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
)

// AnnotationService on a Host names the Service whose load balancer the
// Host's names point at. It is Ambassador's own annotation, not under an
// external-dns prefix; a Host without it is ignored, as in ExternalDNS.
const AnnotationService = "external-dns.ambassador-service"

// indexServiceRef indexes Hosts by the "namespace/name" of the Service
// their annotation names.
const indexServiceRef = "zonestream/ambassador-service"

// parseServiceRef reads the annotation as Ambassador does: "namespace/name",
// else "name.namespace" (split at the first dot: "svc.foo.bar" is Service
// svc in namespace foo.bar), else "name" in namespace default (not the
// Host's: ExternalDNS' rule).
func parseServiceRef(ref string) (namespace, name string, err error) {
	parts := strings.Split(ref, "/")
	switch len(parts) {
	case 1:
		if name, ns, ok := strings.Cut(ref, "."); ok {
			return ns, name, nil
		}
		return corev1.NamespaceDefault, ref, nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("invalid external-dns service: %s", ref)
}

// serviceRef is the "namespace/name" the Host's annotation names; ok is
// false without the annotation.
func serviceRef(h *Host) (key string, ok bool, err error) {
	ref, ok := h.Annotations[AnnotationService]
	if !ok {
		return "", false, nil
	}
	ns, name, err := parseServiceRef(strings.TrimSpace(ref))
	if err == nil && (ns == "" || name == "") {
		err = fmt.Errorf("invalid external-dns service: %s", ref)
	}
	return ns + "/" + name, true, err
}

func hostServiceRef(obj any) ([]string, error) {
	h, ok := obj.(*Host)
	if !ok {
		return nil, nil
	}
	if key, ok, err := serviceRef(h); ok && err == nil {
		return []string{key}, nil
	}
	return nil, nil
}

// registerServices watches Services (the shared informer) and enqueues
// the Hosts naming a Service that was added, deleted or whose addresses
// changed.
func (s *Source) registerServices(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	inf := factory.Core().V1().Services()
	s.services = inf.Lister()
	hostsOf := func(obj any) {
		svc, ok := source.Unwrap(obj).(*corev1.Service)
		if !ok {
			return
		}
		idx := s.hosts.Indexer()
		if idx == nil {
			return
		}
		objs, _ := idx.ByIndex(indexServiceRef, svc.Namespace+"/"+svc.Name)
		for _, o := range objs {
			if h, ok := o.(*Host); ok {
				enqueue(source.Key{Namespace: h.Namespace, Name: h.Name})
			}
		}
	}
	reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: hostsOf,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Service)
			c, _ := cur.(*corev1.Service)
			if o != nil && c != nil && sameAddresses(o, c) {
				return
			}
			hostsOf(cur)
		},
		DeleteFunc: hostsOf,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: service informer: %w", Name, err)
	}
	return reg.HasSynced, nil
}

// sameAddresses reports whether two versions of a Service give the same
// targets.
func sameAddresses(a, b *corev1.Service) bool {
	return slices.Equal(a.Spec.ExternalIPs, b.Spec.ExternalIPs) &&
		slices.EqualFunc(a.Status.LoadBalancer.Ingress, b.Status.LoadBalancer.Ingress,
			func(x, y corev1.LoadBalancerIngress) bool { return x.IP == y.IP && x.Hostname == y.Hostname })
}

// serviceTargets are a Service's spec.externalIPs, else every load
// balancer ingress IP and hostname (both, when one has both), as
// ExternalDNS' ambassador-host source takes them.
func serviceTargets(svc *corev1.Service) []string {
	if len(svc.Spec.ExternalIPs) > 0 {
		return slices.Clone(svc.Spec.ExternalIPs)
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
	return out
}
