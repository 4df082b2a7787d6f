package service

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/zonestream/zonestream/services/collector/source"
)

// typeTargets are what every name of a Service gets from the Service's type.
type typeTargets struct {
	targets []string
	// pods are the Pods of a headless Service with a spec.hostname: each
	// name also gets <hostname>.<name> with that Pod's targets.
	pods []podTargets
	// srv are the node ports of a NodePort Service: each name also gets
	// _<service>._<protocol>.<name> SRV 0 50 <nodePort> <name>.
	srv []srvPort
}

type podTargets struct {
	pod      *corev1.Pod
	hostname string
	targets  []string
}

type srvPort struct {
	nodePort int32
	protocol string
}

func isHeadless(svc *corev1.Service) bool {
	return (svc.Spec.Type == corev1.ServiceTypeClusterIP || svc.Spec.Type == "") && svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// selectorOf is the Service's spec.selector as ExternalDNS reads it: an
// empty selector selects every Pod of the namespace.
func selectorOf(svc *corev1.Service) labels.Selector {
	return labels.SelectorFromSet(svc.Spec.Selector)
}

// annotationValue reads an annotation that takes one of a set of values; a
// value outside the set is reported and treated as absent.
func annotationValue(svc *corev1.Service, key string, problems *[]error, allowed ...string) string {
	v, k, ok := source.Annotation(svc.Annotations, key)
	if !ok {
		return ""
	}
	if !slices.Contains(allowed, v) {
		*problems = append(*problems, &source.Problem{Object: svc, Reason: ReasonInvalidAnnotation, Field: k,
			Err: fmt.Errorf("unknown value %q (known: %s); ignored", v, strings.Join(allowed, ", "))})
		return ""
	}
	return v
}

// headlessTargets are the targets of a headless Service: per endpoint of
// its EndpointSlices (ready ones; not-ready ones too with
// spec.publishNotReadyAddresses or --always-publish-not-ready-addresses)
// whose Pod the Service selects, the Pod's target annotation, else (by the
// endpoints-type annotation) its Node's external addresses or its host IP
// (also --publish-host-ip), else the endpoint's address. Pods with a
// spec.hostname get names of their own.
func (s *Source) headlessTargets(svc *corev1.Service, problems *[]error) *typeTargets {
	out := &typeTargets{}
	if s.slices == nil || s.pods == nil {
		return out
	}
	endpointsType := annotationValue(svc, AnnotationEndpointsType, problems, EndpointsTypeNodeExternalIP, EndpointsTypeHostIP)
	hostIP := endpointsType == EndpointsTypeHostIP || s.opts.PublishHostIP
	podIPs := endpointsType != EndpointsTypeNodeExternalIP && !hostIP
	notReady := svc.Spec.PublishNotReadyAddresses || s.opts.AlwaysPublishNotReadyAddresses
	selector := selectorOf(svc)

	objs, err := s.slices.ByIndex(indexByService, svc.Namespace+"/"+svc.Name)
	if err != nil {
		*problems = append(*problems, err)
		return out
	}
	eslices := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if es, ok := o.(*discoveryv1.EndpointSlice); ok {
			eslices = append(eslices, es)
		}
	}
	// The index is a set: sort, so that problems come in a stable order.
	slices.SortFunc(eslices, func(a, b *discoveryv1.EndpointSlice) int { return cmp.Compare(a.Name, b.Name) })

	// Per Pod: its own targets (nil: the endpoint's address), computed once.
	type podInfo struct {
		pod     *corev1.Pod
		targets []string
		index   int // in out.pods, -1 if no spec.hostname
	}
	seen := map[string]*podInfo{}
	for _, es := range eslices {
		if podIPs && es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			continue // FQDN slices: no address to publish
		}
		for _, ep := range es.Endpoints {
			if !notReady && ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			ref := ep.TargetRef
			if ref == nil || ref.Kind != "Pod" || (ref.APIVersion != "" && ref.APIVersion != "v1") {
				continue
			}
			info, ok := seen[ref.Name]
			if !ok {
				pod, err := s.pods.Pods(svc.Namespace).Get(ref.Name)
				if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
					seen[ref.Name] = nil
					continue
				}
				info = &podInfo{pod: pod, index: -1, targets: s.podTargets(svc, pod, endpointsType, hostIP, problems)}
				if pod.Spec.Hostname != "" {
					info.index = len(out.pods)
					out.pods = append(out.pods, podTargets{pod: pod, hostname: pod.Spec.Hostname})
				}
				seen[ref.Name] = info
			}
			if info == nil {
				continue
			}
			targets := info.targets
			if targets == nil && podIPs {
				if len(ep.Addresses) == 0 {
					continue
				}
				// Only the first address: the others have no defined meaning.
				targets = ep.Addresses[:1]
			}
			out.targets = append(out.targets, targets...)
			if info.index >= 0 {
				out.pods[info.index].targets = append(out.pods[info.index].targets, targets...)
			}
		}
	}
	return out
}

// podTargets are the targets a Pod of a headless Service stands for, or
// nil when it stands for its endpoint address.
func (s *Source) podTargets(svc *corev1.Service, pod *corev1.Pod, endpointsType string, hostIP bool, problems *[]error) []string {
	if v, k, ok := source.Annotation(pod.Annotations, AnnotationTarget); ok {
		var valid []string
		for _, t := range source.SplitList(v) {
			if err := source.ValidateTarget(t); err != nil {
				*problems = append(*problems, &source.Problem{Object: pod, Reason: ReasonInvalidAnnotation, Field: k,
					Err: fmt.Errorf("%w (Pod of headless Service %s)", err, svc.Name)})
				continue
			}
			valid = append(valid, t)
		}
		if len(valid) > 0 {
			return valid
		}
	}
	switch {
	case endpointsType == EndpointsTypeNodeExternalIP:
		if s.nodes == nil {
			return []string{}
		}
		node, err := s.nodes.Get(pod.Spec.NodeName)
		if err != nil {
			return []string{}
		}
		return source.ExternalAddresses(node)
	case hostIP:
		if _, err := netip.ParseAddr(pod.Status.HostIP); err != nil {
			return []string{}
		}
		return []string{pod.Status.HostIP}
	}
	return nil
}

// nodePortTargets are the targets of a NodePort Service: the addresses of
// every schedulable Node (every Node with --exclude-unschedulable=false),
// or with externalTrafficPolicy Local of the Nodes running the Service's
// readiest Pods (localNodes), chosen by the access annotation, IPv6
// InternalIPs beside ExternalIPs only with --expose-internal-ipv6; and one
// SRV record per port with a node port.
func (s *Source) nodePortTargets(svc *corev1.Service, problems *[]error) *typeTargets {
	out := &typeTargets{}
	for _, p := range svc.Spec.Ports {
		if p.NodePort > 0 {
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out.srv = append(out.srv, srvPort{nodePort: p.NodePort, protocol: proto})
		}
	}
	access := annotationValue(svc, AnnotationAccess, problems, AccessPublic, AccessPrivate)
	if s.nodes == nil {
		return out
	}
	var nodes []*corev1.Node
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		if s.pods == nil {
			return out
		}
		pods, err := s.pods.Pods(svc.Namespace).List(selectorOf(svc))
		if err != nil {
			*problems = append(*problems, err)
			return out
		}
		nodes = s.localNodes(pods)
	} else {
		var err error
		if nodes, err = s.nodes.List(labels.Everything()); err != nil {
			*problems = append(*problems, err)
			return out
		}
	}

	var addrs source.NodeAddresses
	for _, n := range nodes {
		if n.Spec.Unschedulable && !s.opts.IncludeUnschedulable {
			continue
		}
		addrs.Add(n)
	}
	public := addrs.External
	if s.opts.ExposeInternalIPv6 {
		public = addrs.Public()
	}
	switch {
	case access == AccessPublic:
		out.targets = public
	case access == AccessPrivate:
		out.targets = addrs.Internal
	case len(addrs.External) > 0:
		out.targets = public
	default:
		out.targets = addrs.Internal
	}
	return out
}

// Pods of an externalTrafficPolicy Local Service, ranked as ExternalDNS
// ranks them: ready and not terminating, else ready and terminating, else
// running. Only Nodes with a Pod of the best rank any Pod has are
// published: traffic sent to a Node without a ready Pod is dropped.
const (
	podRunning = iota + 1
	podReadyTerminating
	podReady
)

// localNodes are the Nodes running the readiest of pods.
func (s *Source) localNodes(pods []*corev1.Pod) []*corev1.Node {
	rank := map[string]int{}
	best := 0
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" {
			continue
		}
		r := podRunning
		if podReadyCondition(p) {
			r = podReadyTerminating
			if p.DeletionTimestamp == nil {
				r = podReady
			}
		}
		rank[p.Spec.NodeName] = max(rank[p.Spec.NodeName], r)
		best = max(best, r)
	}
	var nodes []*corev1.Node
	for _, name := range slices.Sorted(maps.Keys(rank)) {
		if rank[name] != best {
			continue
		}
		if n, err := s.nodes.Get(name); err == nil {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// podReadyCondition reports whether the Pod's Ready condition is True.
func podReadyCondition(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
