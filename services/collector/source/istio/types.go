package istio

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// The informers turn every Istio object into one of these small typed
// structs, keeping only the fields the sources read: the caches stay
// small, --fqdn-template sees .Name, .Namespace, .Annotations and .Spec as
// it would on Istio's own types, and events can name the object.

// Gateway is what the sources keep of a networking.istio.io Gateway.
type Gateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              GatewaySpec `json:"spec"`
	// invalid is why the spec could not be read, reported on the Gateway.
	invalid error
}

// GatewaySpec holds the Gateway's selector and its servers' hosts.
type GatewaySpec struct {
	Selector map[string]string `json:"selector,omitempty"`
	Servers  []Server          `json:"servers,omitempty"`
}

// Server is one server of a Gateway: the hosts it admits, each
// "[namespace/]host".
type Server struct {
	Hosts []string `json:"hosts,omitempty"`
}

// VirtualService is what the sources keep of a networking.istio.io
// VirtualService.
type VirtualService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              VirtualServiceSpec `json:"spec"`
	invalid           error
}

// VirtualServiceSpec holds the hosts, the gateways ("[namespace/]name" or
// "mesh") and the namespaces the VirtualService is exported to.
type VirtualServiceSpec struct {
	Hosts    []string `json:"hosts,omitempty"`
	Gateways []string `json:"gateways,omitempty"`
	ExportTo []string `json:"exportTo,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (g *Gateway) DeepCopyObject() runtime.Object {
	c := *g
	c.ObjectMeta = *g.ObjectMeta.DeepCopy()
	c.Spec.Selector = maps.Clone(g.Spec.Selector)
	c.Spec.Servers = make([]Server, len(g.Spec.Servers))
	for i, s := range g.Spec.Servers {
		c.Spec.Servers[i] = Server{Hosts: slices.Clone(s.Hosts)}
	}
	return &c
}

// DeepCopyObject implements runtime.Object.
func (v *VirtualService) DeepCopyObject() runtime.Object {
	c := *v
	c.ObjectMeta = *v.ObjectMeta.DeepCopy()
	c.Spec = VirtualServiceSpec{Hosts: slices.Clone(v.Spec.Hosts), Gateways: slices.Clone(v.Spec.Gateways), ExportTo: slices.Clone(v.Spec.ExportTo)}
	return &c
}

// fromUnstructured reads an object's kind, its metadata (name,
// namespace, uid, resource version, labels, and the annotations
// source.Transform keeps) and decodes its spec into spec. A spec that
// cannot be read is returned as the error, to be reported on the object.
func fromUnstructured(u *unstructured.Unstructured, keep []string, spec any) (metav1.TypeMeta, metav1.ObjectMeta, error) {
	tm := metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
	om := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(), Annotations: source.KeepAnnotations(u.GetAnnotations(), keep...)}
	m, ok := u.Object["spec"].(map[string]any)
	if !ok {
		return tm, om, nil
	}
	return tm, om, runtime.DefaultUnstructuredConverter.FromUnstructured(m, spec)
}

// transformGateway is the Gateway informer's transform. A spec that
// cannot be read is kept as invalid (to be reported), never returned as
// an error, which would stall the informer.
func transformGateway(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		g := &Gateway{}
		g.TypeMeta, g.ObjectMeta, g.invalid = fromUnstructured(u, keep, &g.Spec)
		return g, nil
	}
}

// transformVirtualService is the VirtualService informer's transform.
func transformVirtualService(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		v := &VirtualService{}
		v.TypeMeta, v.ObjectMeta, v.invalid = fromUnstructured(u, keep, &v.Spec)
		return v, nil
	}
}

// sameGateway reports whether two versions of a Gateway are the same to
// the sources.
func sameGateway(a, b *Gateway) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		maps.Equal(a.Spec.Selector, b.Spec.Selector) &&
		slices.EqualFunc(a.Spec.Servers, b.Spec.Servers, func(x, y Server) bool { return slices.Equal(x.Hosts, y.Hosts) }) &&
		(a.invalid == nil) == (b.invalid == nil)
}
