package contour

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// HTTPProxy is what the source keeps of a projectcontour.io HTTPProxy:
// its virtual host's name and the load balancer Contour wrote in its
// status. --fqdn-template sees .Name, .Namespace, .Annotations,
// .Spec.VirtualHost.Fqdn as on Contour's own type.
type HTTPProxy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              HTTPProxySpec   `json:"spec"`
	Status            HTTPProxyStatus `json:"status"`
	// invalid is why the spec or status could not be read, reported on
	// the HTTPProxy.
	invalid error
}

// HTTPProxySpec holds the virtual host; nil for a proxy included by
// another (no name of its own).
type HTTPProxySpec struct {
	VirtualHost *VirtualHost `json:"virtualhost,omitempty"`
}

// VirtualHost is the name the root proxy serves.
type VirtualHost struct {
	Fqdn string `json:"fqdn"`
}

// HTTPProxyStatus holds the load balancer Contour's Envoy is reached at.
type HTTPProxyStatus struct {
	LoadBalancer LoadBalancerStatus `json:"loadBalancer"`
}

// LoadBalancerStatus is the load balancer's addresses.
type LoadBalancerStatus struct {
	Ingress []LoadBalancerIngress `json:"ingress,omitempty"`
}

// LoadBalancerIngress is one address: an IP, a hostname, or both.
type LoadBalancerIngress struct {
	IP       string `json:"ip,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (p *HTTPProxy) DeepCopyObject() runtime.Object {
	c := *p
	c.ObjectMeta = *p.ObjectMeta.DeepCopy()
	if p.Spec.VirtualHost != nil {
		vh := *p.Spec.VirtualHost
		c.Spec.VirtualHost = &vh
	}
	c.Status.LoadBalancer.Ingress = slices.Clone(p.Status.LoadBalancer.Ingress)
	return &c
}

// transformHTTPProxy is the informer's transform; an HTTPProxy that
// cannot be read is kept with invalid set (to be reported), never
// returned as an error, which would stall the informer.
func transformHTTPProxy(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		p := &HTTPProxy{}
		p.TypeMeta, p.ObjectMeta, p.invalid = source.FromUnstructured(u, keep, map[string]any{"spec": &p.Spec, "status": &p.Status})
		return p, nil
	}
}

// fqdn is the virtual host's name, "" for an included proxy.
func (p *HTTPProxy) fqdn() string {
	if p.Spec.VirtualHost == nil {
		return ""
	}
	return p.Spec.VirtualHost.Fqdn
}

// sameHTTPProxy reports whether two versions of an HTTPProxy want the
// same endpoints (Contour rewrites its status conditions often).
func sameHTTPProxy(a, b *HTTPProxy) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		a.fqdn() == b.fqdn() && (a.invalid == nil) == (b.invalid == nil) &&
		slices.Equal(a.Status.LoadBalancer.Ingress, b.Status.LoadBalancer.Ingress)
}
