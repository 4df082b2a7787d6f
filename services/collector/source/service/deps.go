package service

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Informer indexes of the Service source.
const (
	// indexByService indexes EndpointSlices by "<namespace>/<name>" of the
	// Service they belong to (label kubernetes.io/service-name).
	indexByService = "zonestream/service"
	// indexDeps indexes Services by the dependent objects their targets
	// are computed from (keys below): what a changed Pod or Node looks up.
	indexDeps = "zonestream/deps"
)

// Keys of indexDeps.
const (
	// depAllNodes: NodePort Services of externalTrafficPolicy Cluster,
	// whose targets are the addresses of every Node.
	depAllNodes = "nodes"
)

// depPods: Services of namespace ns whose targets depend on the Pods they
// select (headless; NodePort with externalTrafficPolicy Local).
func depPods(ns string) string { return "pods/" + ns }

// depNodesOfPods: Services of namespace ns whose targets depend on the
// Nodes their selected Pods run on (headless with endpoints-type
// NodeExternalIP; NodePort with externalTrafficPolicy Local).
func depNodesOfPods(ns string) string { return "nodes-of-pods/" + ns }

// serviceDeps is the indexDeps index function.
func serviceDeps(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok || hasValidTarget(svc) {
		return nil, nil
	}
	switch {
	case isHeadless(svc):
		keys := []string{depPods(svc.Namespace)}
		if v, _, _ := source.Annotation(svc.Annotations, AnnotationEndpointsType); v == EndpointsTypeNodeExternalIP {
			keys = append(keys, depNodesOfPods(svc.Namespace))
		}
		return keys, nil
	case svc.Spec.Type == corev1.ServiceTypeNodePort:
		if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
			return []string{depPods(svc.Namespace), depNodesOfPods(svc.Namespace)}, nil
		}
		return []string{depAllNodes}, nil
	}
	return nil, nil
}

// hasValidTarget reports whether the Service's target annotation holds a
// valid target, which replaces whatever its type would give.
func hasValidTarget(svc *corev1.Service) bool {
	v, _, ok := source.Annotation(svc.Annotations, AnnotationTarget)
	if !ok {
		return false
	}
	for _, t := range source.SplitList(v) {
		if source.ValidateTarget(t) == nil {
			return true
		}
	}
	return false
}

func endpointSliceService(obj any) ([]string, error) {
	es, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	name := es.Labels[discoveryv1.LabelServiceName]
	if name == "" {
		return nil, nil
	}
	return []string{es.Namespace + "/" + name}, nil
}

// samePod reports whether two (transformed) versions of a Pod are the same
// to the Service source.
func samePod(a, b *corev1.Pod) bool {
	return a.Spec.Hostname == b.Spec.Hostname && a.Spec.NodeName == b.Spec.NodeName &&
		a.Status.Phase == b.Status.Phase && a.Status.HostIP == b.Status.HostIP &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations)
}

// wantsType reports whether Services of type t pass --service-type-filter.
func (s *Source) wantsType(t corev1.ServiceType) bool {
	return len(s.opts.ServiceTypeFilter) == 0 || slices.Contains(s.opts.ServiceTypeFilter, string(t))
}

// Register implements source.Source. The Service informer's handlers
// enqueue the changed Service. When headless Services pass the type filter
// the source also watches EndpointSlices (a change enqueues the Service of
// the slice); when headless or NodePort Services do, Pods (a change
// enqueues the headless and externalTrafficPolicy-Local NodePort Services
// of the namespace whose selector matches the Pod's old or new labels);
// when NodePort Services do, Nodes (a change of addresses enqueues every
// NodePort Service of policy Cluster, and the Services of indexDeps
// depNodesOfPods selecting a Pod on that Node). Everything goes through indexes: nothing is ever relisted.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	headless := s.wantsType(corev1.ServiceTypeClusterIP)
	nodePort := s.wantsType(corev1.ServiceTypeNodePort)
	var synced []cache.InformerSynced
	watch := func(register func(informers.SharedInformerFactory, func(source.Key)) (cache.InformerSynced, error)) error {
		hasSynced, err := register(factory, enqueue)
		synced = append(synced, hasSynced)
		return err
	}
	services := func(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
		return s.registerServices(factory, enqueue, headless || nodePort)
	}
	if err := watch(services); err != nil {
		return nil, err
	}
	if headless {
		if err := watch(s.registerEndpointSlices); err != nil {
			return nil, err
		}
	}
	if headless || nodePort {
		if err := watch(s.registerPods); err != nil {
			return nil, err
		}
	}
	// Nodes only when NodePort Services pass the filter, as ExternalDNS:
	// a filter without NodePort needs no access to Nodes (ExternalDNS'
	// Helm chart, namespaced, grants none), and a headless Service's
	// NodeExternalIP targets are then skipped, as ExternalDNS skips them.
	if nodePort {
		if err := watch(s.registerNodes); err != nil {
			return nil, err
		}
	}
	return func() bool {
		for _, f := range synced {
			if !f() {
				return false
			}
		}
		return true
	}, nil
}

// registerServices watches Services, indexed by what they depend on when
// dependent (headless or NodePort Services pass the type filter).
func (s *Source) registerServices(factory informers.SharedInformerFactory, enqueue func(source.Key), dependent bool) (cache.InformerSynced, error) {
	svcInf := factory.Core().V1().Services()
	s.lister = svcInf.Lister()
	if dependent {
		if err := svcInf.Informer().AddIndexers(cache.Indexers{indexDeps: serviceDeps}); err != nil {
			return nil, fmt.Errorf("service informer: %w", err)
		}
		s.services = svcInf.Informer().GetIndexer()
	}
	if err := s.registerResolve(svcInf.Informer()); err != nil {
		return nil, err
	}
	handle := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			enqueue(k)
		}
	}
	reg, err := svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
		DeleteFunc: handle,
	})
	if err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	return reg.HasSynced, nil
}

// registerEndpointSlices watches EndpointSlices: a change enqueues the
// Service of the slice (both, when it moves to another).
func (s *Source) registerEndpointSlices(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	inf := factory.Discovery().V1().EndpointSlices().Informer()
	if err := inf.AddIndexers(cache.Indexers{indexByService: endpointSliceService}); err != nil {
		return nil, fmt.Errorf("endpointslice informer: %w", err)
	}
	s.slices = inf.GetIndexer()
	enqueueService := func(obj any) {
		if es, ok := source.Unwrap(obj).(*discoveryv1.EndpointSlice); ok {
			if name := es.Labels[discoveryv1.LabelServiceName]; name != "" {
				enqueue(source.Key{Namespace: es.Namespace, Name: name})
			}
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueService,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*discoveryv1.EndpointSlice)
			c, _ := cur.(*discoveryv1.EndpointSlice)
			if o != nil && c != nil && o.Labels[discoveryv1.LabelServiceName] != c.Labels[discoveryv1.LabelServiceName] {
				enqueueService(old)
			}
			enqueueService(cur)
		},
		DeleteFunc: enqueueService,
	})
	if err != nil {
		return nil, fmt.Errorf("endpointslice informer: %w", err)
	}
	return reg.HasSynced, nil
}

// registerPods watches Pods: a change enqueues the Services selecting the
// Pod's old or new labels (enqueueForPods).
func (s *Source) registerPods(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	podInf := factory.Core().V1().Pods()
	if err := podInf.Informer().SetTransform(source.TransformPod(s.opts.Filters.AnnotationKeys()...)); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	if err := source.AddIndexer(podInf.Informer(), source.IndexPodsByNode, source.PodNode); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	s.pods = podInf.Lister()
	s.podIndex = podInf.Informer().GetIndexer()
	reg, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.enqueueForPods(enqueue, obj) },
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Pod)
			c, _ := cur.(*corev1.Pod)
			if o != nil && c != nil && samePod(o, c) {
				return
			}
			s.enqueueForPods(enqueue, old, cur)
		},
		DeleteFunc: func(obj any) { s.enqueueForPods(enqueue, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	return reg.HasSynced, nil
}

// registerNodes watches Nodes, for NodePort targets and headless
// endpoints-type NodeExternalIP: a change of addresses enqueues the
// Services that use them (enqueueForNode).
func (s *Source) registerNodes(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	nodeInf := factory.Core().V1().Nodes()
	if err := nodeInf.Informer().SetTransform(source.TransformNode(s.opts.Filters.AnnotationKeys()...)); err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	s.nodes = nodeInf.Lister()
	reg, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.enqueueForNode(enqueue, obj) },
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Node)
			c, _ := cur.(*corev1.Node)
			if o != nil && c != nil && slices.Equal(o.Status.Addresses, c.Status.Addresses) {
				return
			}
			s.enqueueForNode(enqueue, cur)
		},
		DeleteFunc: func(obj any) { s.enqueueForNode(enqueue, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	return reg.HasSynced, nil
}

// enqueueForPods enqueues the Services of indexDeps depPods that select
// any of the given Pods (old and new state of one Pod: both label sets).
func (s *Source) enqueueForPods(enqueue func(source.Key), objs ...any) {
	keys := map[source.Key]bool{}
	for _, obj := range objs {
		if p, ok := source.Unwrap(obj).(*corev1.Pod); ok {
			s.selecting(p, depPods(p.Namespace), keys)
		}
	}
	for k := range keys {
		enqueue(k)
	}
}

// enqueueForNode enqueues the Services whose targets a change of the
// Node's addresses may change.
func (s *Source) enqueueForNode(enqueue func(source.Key), obj any) {
	n, ok := source.Unwrap(obj).(*corev1.Node)
	if !ok {
		return
	}
	keys := map[source.Key]bool{}
	all, _ := s.services.ByIndex(indexDeps, depAllNodes)
	for _, o := range all {
		if svc, ok := o.(*corev1.Service); ok {
			keys[source.Key{Namespace: svc.Namespace, Name: svc.Name}] = true
		}
	}
	pods, _ := s.podIndex.ByIndex(source.IndexPodsByNode, n.Name)
	for _, o := range pods {
		if p, ok := o.(*corev1.Pod); ok {
			s.selecting(p, depNodesOfPods(p.Namespace), keys)
		}
	}
	for k := range keys {
		enqueue(k)
	}
}

// selecting adds to keys the Services of indexDeps key dep whose selector
// matches the Pod.
func (s *Source) selecting(p *corev1.Pod, dep string, keys map[source.Key]bool) {
	objs, _ := s.services.ByIndex(indexDeps, dep)
	for _, o := range objs {
		svc, ok := o.(*corev1.Service)
		if ok && selectorOf(svc).Matches(labels.Set(p.Labels)) {
			keys[source.Key{Namespace: svc.Namespace, Name: svc.Name}] = true
		}
	}
}
