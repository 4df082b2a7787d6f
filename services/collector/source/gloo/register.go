package gloo

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Informer indexes.
const (
	// indexVirtualService indexes Proxies by the "namespace/name" of each
	// VirtualService their virtual hosts come from.
	indexVirtualService = "zonestream/gloo-virtualservice"
	// indexGateway indexes Proxies by the "namespace/name" of each
	// Gateway their listeners come from.
	indexGateway = "zonestream/gloo-gateway"
	// indexIngress indexes Gateways by the "namespace/name" of the
	// Ingress their ingress annotation names.
	indexIngress = "zonestream/gloo-ingress"
)

func proxyVirtualServices(obj any) ([]string, error) {
	p, ok := obj.(*Proxy)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, l := range p.Spec.Listeners {
		for _, vh := range l.HTTPListener.VirtualHosts {
			keys = append(keys, vh.refs(kindVirtualService)...)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(keys))), nil
}

func proxyGateways(obj any) ([]string, error) {
	p, ok := obj.(*Proxy)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, l := range p.Spec.Listeners {
		keys = append(keys, l.MetadataStatic.refs(kindGateway)...)
	}
	return slices.Compact(slices.Sorted(slices.Values(keys))), nil
}

func gatewayIngress(obj any) ([]string, error) {
	g, ok := obj.(*Meta)
	if !ok {
		return nil, nil
	}
	if key, ok, err := ingressRef(g); ok && err == nil {
		return []string{key}, nil
	}
	return nil, nil
}

// register makes the informers and their handlers. A Proxy's change
// enqueues it; a VirtualService's or Gateway's change of annotations, the
// Proxies made from it; an Ingress's change of load balancer, the Proxies
// of the Gateways naming it; a Service's change of addresses, the Proxy
// of the same name.
func (s *Source) register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	enqueueAll := func() {
		if s.proxies.Served() {
			s.proxies.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
		}
	}
	proxiesBy := func(index string, keys ...string) {
		idx := s.proxies.Indexer()
		if idx == nil {
			return
		}
		for _, k := range keys {
			objs, _ := idx.ByIndex(index, k)
			for _, o := range objs {
				if p, ok := o.(*Proxy); ok {
					enqueue(source.Key{Namespace: p.Namespace, Name: p.Name})
				}
			}
		}
	}
	proxyNamespace := ""
	if len(s.namespaces) == 1 {
		proxyNamespace = s.namespaces[0]
	}
	var err error
	s.proxies, err = s.lazy(ProxyGroupVersion, "Proxy", proxyNamespace, transformProxy,
		cache.Indexers{indexVirtualService: proxyVirtualServices, indexGateway: proxyGateways},
		cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Proxy)
				c, _ := cur.(*Proxy)
				if o != nil && c != nil && sameProxy(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		func() { enqueueAll(); s.resync() })
	if err != nil {
		return nil, err
	}
	// metaChanged calls changed with the object of an add or delete, and
	// of an update that changed its annotations.
	metaChanged := func(changed func(m *Meta)) cache.ResourceEventHandler {
		one := func(obj any) {
			if m, ok := source.Unwrap(obj).(*Meta); ok {
				changed(m)
			}
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc: one,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Meta)
				c, _ := cur.(*Meta)
				if o != nil && c != nil && maps.Equal(o.Annotations, c.Annotations) {
					return
				}
				one(old)
				one(cur)
			},
			DeleteFunc: one,
		}
	}
	s.virtualServices, err = s.lazy(GatewayGroupVersion, "VirtualService", "", transformMeta, nil,
		metaChanged(func(m *Meta) { proxiesBy(indexVirtualService, m.Namespace+"/"+m.Name) }), enqueueAll)
	if err != nil {
		return nil, err
	}
	s.gateways, err = s.lazy(GatewayGroupVersion, "Gateway", "", transformMeta, cache.Indexers{indexIngress: gatewayIngress},
		metaChanged(func(m *Meta) { proxiesBy(indexGateway, m.Namespace+"/"+m.Name) }), enqueueAll)
	if err != nil {
		return nil, err
	}

	svcInf := factory.Core().V1().Services()
	s.services = svcInf.Lister()
	svcReg, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.serviceChanged(obj, enqueue) },
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Service)
			c, _ := cur.(*corev1.Service)
			if o != nil && c != nil && o.Spec.Type == c.Spec.Type && sameLoadBalancer(o.Status.LoadBalancer.Ingress, c.Status.LoadBalancer.Ingress) {
				return
			}
			s.serviceChanged(cur, enqueue)
		},
		DeleteFunc: func(obj any) { s.serviceChanged(obj, enqueue) },
	})
	if err != nil {
		return nil, err
	}

	ingInf := factory.Networking().V1().Ingresses()
	s.ingresses = ingInf.Lister()
	ingressChanged := func(obj any) {
		ing, ok := source.Unwrap(obj).(*networkingv1.Ingress)
		idx := s.gateways.Indexer()
		if !ok || idx == nil {
			return
		}
		objs, _ := idx.ByIndex(indexIngress, ing.Namespace+"/"+ing.Name)
		for _, o := range objs {
			if g, ok := o.(*Meta); ok {
				proxiesBy(indexGateway, g.Namespace+"/"+g.Name)
			}
		}
	}
	ingReg, err := ingInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: ingressChanged,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*networkingv1.Ingress)
			c, _ := cur.(*networkingv1.Ingress)
			if o != nil && c != nil && slices.EqualFunc(o.Status.LoadBalancer.Ingress, c.Status.LoadBalancer.Ingress,
				func(x, y networkingv1.IngressLoadBalancerIngress) bool {
					return x.IP == y.IP && x.Hostname == y.Hostname
				}) {
				return
			}
			ingressChanged(cur)
		},
		DeleteFunc: ingressChanged,
	})
	if err != nil {
		return nil, err
	}
	return func() bool {
		return svcReg.HasSynced() && ingReg.HasSynced() &&
			s.proxies.HasSynced() && s.virtualServices.HasSynced() && s.gateways.HasSynced()
	}, nil
}

// serviceChanged enqueues the Proxy a Service is the load balancer of:
// the one of the same name and namespace.
func (s *Source) serviceChanged(obj any, enqueue func(source.Key)) {
	svc, ok := source.Unwrap(obj).(*corev1.Service)
	if ok && slices.Contains(s.namespaces, svc.Namespace) {
		enqueue(source.Key{Namespace: svc.Namespace, Name: svc.Name})
	}
}

func sameLoadBalancer(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool { return x.IP == y.IP && x.Hostname == y.Hostname })
}
