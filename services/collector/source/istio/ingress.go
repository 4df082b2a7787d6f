package istio

import (
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
)

// AnnotationIngress on a Gateway names an Ingress, "[namespace/]name"
// (namespace default: the Gateway's), whose load balancer status gives
// the Gateway's targets instead of its Services, as in ExternalDNS.
const AnnotationIngress = "ingress"

// indexIngressRef indexes Gateways by the "namespace/name" of the Ingress
// their ingress annotation names.
const indexIngressRef = "zonestream/istio-ingress"

// ingressRef reads a Gateway's ingress annotation; ok is false when it is
// absent or empty, err set when it is malformed.
func ingressRef(g *Gateway) (key, field string, ok bool, err error) {
	v, k, present := source.Annotation(g.Annotations, AnnotationIngress)
	v = strings.TrimSpace(v)
	if !present || v == "" {
		return "", k, false, nil
	}
	ns, name, valid := splitHost(v)
	if !valid || name == "" {
		return "", k, true, fmt.Errorf("ingress %q is not [namespace/]name", v)
	}
	if ns == "" {
		ns = g.Namespace
	}
	return ns + "/" + name, k, true, nil
}

func gatewayIngressRef(obj any) ([]string, error) {
	g, ok := obj.(*Gateway)
	if !ok {
		return nil, nil
	}
	if key, _, ok, err := ingressRef(g); ok && err == nil {
		return []string{key}, nil
	}
	return nil, nil
}

// gatewayIndexers are the indexes of every Gateway informer.
func gatewayIndexers() cache.Indexers {
	return cache.Indexers{indexSelectorPair: gatewaySelectorPairs, indexIngressRef: gatewayIngressRef}
}

// registerIngresses watches Ingresses (the shared informer, with the
// collector's transform) and calls changed with the Gateways naming an
// Ingress that was added, deleted or whose load balancer status changed.
func (b *base) registerIngresses(factory informers.SharedInformerFactory, changed func(gs []*Gateway)) (cache.InformerSynced, error) {
	inf := factory.Networking().V1().Ingresses()
	b.ingresses = inf.Lister()
	one := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			changed(b.gatewaysNaming(k.String()))
		}
	}
	reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: one,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*networkingv1.Ingress)
			c, _ := cur.(*networkingv1.Ingress)
			if o != nil && c != nil && slices.EqualFunc(o.Status.LoadBalancer.Ingress, c.Status.LoadBalancer.Ingress,
				func(x, y networkingv1.IngressLoadBalancerIngress) bool {
					return x.IP == y.IP && x.Hostname == y.Hostname
				}) {
				return
			}
			one(cur)
		},
		DeleteFunc: one,
	})
	if err != nil {
		return nil, fmt.Errorf("ingress informer: %w", err)
	}
	return reg.HasSynced, nil
}

// gatewaysNaming returns the Gateways whose ingress annotation names the
// Ingress of key "namespace/name".
func (b *base) gatewaysNaming(key string) []*Gateway {
	idx := b.gateways.Indexer()
	if idx == nil {
		return nil
	}
	objs, _ := idx.ByIndex(indexIngressRef, key)
	out := make([]*Gateway, 0, len(objs))
	for _, o := range objs {
		if g, ok := o.(*Gateway); ok {
			out = append(out, g)
		}
	}
	return out
}

// ingressTargets are the load balancer IPs and hostnames of the Ingress
// the Gateway's ingress annotation names (none if it does not exist).
func (b *base) ingressTargets(g *Gateway, in *source.Inputs) (targets []string, named bool) {
	key, field, named, err := ingressRef(g)
	if !named {
		return nil, false
	}
	if err != nil {
		in.Problem(source.ReasonInvalidAnnotation, field, err)
		return nil, true
	}
	ns, name, _ := strings.Cut(key, "/")
	ing, err := b.ingresses.Ingresses(ns).Get(name)
	if err != nil {
		return nil, true
	}
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		targets = appendIPOrHostname(targets, lb.IP, lb.Hostname)
	}
	return targets, true
}
