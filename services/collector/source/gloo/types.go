package gloo

import (
	"maps"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// The kinds a Proxy's metadata names its sources by.
const (
	kindVirtualService = "*v1.VirtualService"
	kindGateway        = "*v1.Gateway"
)

// Proxy is what the source keeps of a gloo.solo.io Proxy: its listeners'
// virtual hosts and where each came from. The informer turns every object
// into one, so the cache stays small and events can name the object.
type Proxy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ProxySpec `json:"spec"`
	// invalid is why the spec could not be read, reported on the Proxy.
	invalid error
}

// ProxySpec holds the listeners.
type ProxySpec struct {
	Listeners []Listener `json:"listeners,omitempty"`
}

// Listener is one listener: its HTTP virtual hosts, and its sources (the
// Gateways it was made from).
type Listener struct {
	HTTPListener   HTTPListener   `json:"httpListener"`
	MetadataStatic MetadataStatic `json:"metadataStatic"`
}

// HTTPListener holds the virtual hosts.
type HTTPListener struct {
	VirtualHosts []VirtualHost `json:"virtualHosts,omitempty"`
}

// VirtualHost is one virtual host: its domains and the resources it was
// made from, in either of the two forms Gloo has written them.
type VirtualHost struct {
	Domains        []string       `json:"domains,omitempty"`
	Metadata       Metadata       `json:"metadata"`
	MetadataStatic MetadataStatic `json:"metadataStatic"`
}

// Metadata is the older form of a virtual host's sources.
type Metadata struct {
	Sources []MetadataSource `json:"sources,omitempty"`
}

// MetadataSource is one source in the older form.
type MetadataSource struct {
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// MetadataStatic is the newer form of sources.
type MetadataStatic struct {
	Sources []StaticSource `json:"sources,omitempty"`
}

// StaticSource is one source in the newer form.
type StaticSource struct {
	ResourceKind string      `json:"resourceKind,omitempty"`
	ResourceRef  ResourceRef `json:"resourceRef"`
}

// ResourceRef names a resource.
type ResourceRef struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// refs are the "namespace/name" of a virtual host's sources of kind.
func (v VirtualHost) refs(kind string) []string {
	var out []string
	for _, s := range v.Metadata.Sources {
		if s.Kind == kind {
			out = append(out, s.Namespace+"/"+s.Name)
		}
	}
	return append(out, v.MetadataStatic.refs(kind)...)
}

func (m MetadataStatic) refs(kind string) []string {
	var out []string
	for _, s := range m.Sources {
		if s.ResourceKind == kind {
			out = append(out, s.ResourceRef.Namespace+"/"+s.ResourceRef.Name)
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object. The spec is never changed
// once made by the transform: copies share it.
func (p *Proxy) DeepCopyObject() runtime.Object {
	c := *p
	c.ObjectMeta = *p.ObjectMeta.DeepCopy()
	return &c
}

// Meta is what the source keeps of a VirtualService or a Gateway: its
// name and the annotations under an external-dns prefix.
type Meta struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// DeepCopyObject implements runtime.Object.
func (m *Meta) DeepCopyObject() runtime.Object {
	c := *m
	c.ObjectMeta = *m.ObjectMeta.DeepCopy()
	return &c
}

func objectMeta(u *unstructured.Unstructured, keep []string) (metav1.TypeMeta, metav1.ObjectMeta) {
	return metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(),
			Annotations: source.KeepAnnotations(u.GetAnnotations(), keep...)}
}

// transformProxy is the Proxy informer's transform. A spec that cannot be
// read is kept as invalid (to be reported), never returned as an error,
// which would stall the informer.
func transformProxy(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	p := &Proxy{}
	p.TypeMeta, p.ObjectMeta = objectMeta(u, nil)
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		p.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &p.Spec)
	}
	return p, nil
}

// transformMeta is the VirtualService and Gateway informers' transform.
func transformMeta(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	m := &Meta{}
	m.TypeMeta, m.ObjectMeta = objectMeta(u, nil)
	return m, nil
}

// sameProxy reports whether two versions of a Proxy are the same to the
// source.
func sameProxy(a, b *Proxy) bool {
	return maps.Equal(a.Annotations, b.Annotations) && reflect.DeepEqual(a.Spec, b.Spec) &&
		(a.invalid == nil) == (b.invalid == nil)
}
