package source

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Pods and Nodes are watched by several sources (service, pod, node)
// through the one shared informer the factory has per type. An informer
// has one transform, so every source installs the same ones, keeping the
// union of what any source reads.

// IndexPodsByNode indexes Pods by spec.nodeName (see PodNode).
const IndexPodsByNode = "zonestream/pods-by-node"

// TransformPod returns the Pod transform every source uses: it keeps the
// name, namespace, uid, labels, the external-dns annotations and those in
// keep (what --annotation-filter reads), spec.hostname, spec.nodeName,
// spec.hostNetwork, status.phase, status.hostIP, status.podIP(s), and
// whether it is ready and terminating (the Ready condition, alone; the
// deletion timestamp): what ranks the Nodes of an externalTrafficPolicy
// Local Service.
func TransformPod(keep ...string) cache.TransformFunc {
	keepSet := setOf(keep)
	return func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		var ready []corev1.PodCondition
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				ready = []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
			}
		}
		return &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{
				Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
				Labels: p.Labels, Annotations: keepAnnotations(p.Annotations, keepSet), DeletionTimestamp: p.DeletionTimestamp,
			},
			Spec: corev1.PodSpec{Hostname: p.Spec.Hostname, NodeName: p.Spec.NodeName, HostNetwork: p.Spec.HostNetwork},
			Status: corev1.PodStatus{Phase: p.Status.Phase, HostIP: p.Status.HostIP,
				PodIP: p.Status.PodIP, PodIPs: p.Status.PodIPs, Conditions: ready},
		}, nil
	}
}

// TransformNode returns the Node transform every source uses: it keeps
// the name, uid, labels, the external-dns annotations and those in keep,
// spec.unschedulable and status.addresses.
func TransformNode(keep ...string) cache.TransformFunc {
	keepSet := setOf(keep)
	return func(obj any) (any, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return obj, nil
		}
		return &corev1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
				Labels: n.Labels, Annotations: keepAnnotations(n.Annotations, keepSet)},
			Spec:   corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
			Status: corev1.NodeStatus{Addresses: n.Status.Addresses},
		}, nil
	}
}

// NodeAddresses sorts the addresses of Nodes by what the sources publish
// of them.
type NodeAddresses struct {
	External, Internal []string
	// InternalIPv6 are the IPv6 Internal ones (usable from outside too).
	InternalIPv6 []string
}

// Add adds the valid IP addresses of n.
func (a *NodeAddresses) Add(n *corev1.Node) {
	for _, na := range n.Status.Addresses {
		addr, err := netip.ParseAddr(na.Address)
		if err != nil {
			continue
		}
		switch na.Type {
		case corev1.NodeExternalIP:
			a.External = append(a.External, na.Address)
		case corev1.NodeInternalIP:
			a.Internal = append(a.Internal, na.Address)
			if addr.Is6() && !addr.Is4In6() {
				a.InternalIPv6 = append(a.InternalIPv6, na.Address)
			}
		}
	}
}

// Public are the External and the IPv6 Internal addresses.
func (a *NodeAddresses) Public() []string {
	return append(slices.Clone(a.External), a.InternalIPv6...)
}

// ExternalAddresses are a Node's ExternalIP addresses and its IPv6
// InternalIP addresses (usable from outside as well); never nil.
func ExternalAddresses(n *corev1.Node) []string {
	var a NodeAddresses
	a.Add(n)
	return append([]string{}, a.Public()...)
}

// KeepAnnotations returns the annotations a transform keeps: those under
// an external-dns prefix and those in keep (nil if none).
func KeepAnnotations(ann map[string]string, keep ...string) map[string]string {
	return keepAnnotations(ann, setOf(keep))
}

// PodNode is the IndexPodsByNode index function.
func PodNode(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// AddIndexer adds index name to a shared informer unless another source
// already added it: sources sharing an informer share its indexes.
func AddIndexer(inf cache.SharedIndexInformer, name string, fn cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{name: fn}); err != nil {
		return fmt.Errorf("index %s: %w", name, err)
	}
	return nil
}

// Unwrap returns the object of a delete notification whose final state
// was missed.
func Unwrap(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

func setOf(keys []string) map[string]bool {
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}
