package kong

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// TCPIngress is what the source keeps of a configuration.konghq.com
// TCPIngress: its rules' hosts (SNI) and the load balancer Kong wrote in
// its status.
type TCPIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              TCPIngressSpec   `json:"spec"`
	Status            TCPIngressStatus `json:"status"`
	// invalid is why the spec or status could not be read, reported on
	// the TCPIngress.
	invalid error
}

// TCPIngressSpec holds the rules.
type TCPIngressSpec struct {
	Rules []TCPIngressRule `json:"rules,omitempty"`
}

// TCPIngressRule is one rule: the SNI host it routes (empty: by port
// only).
type TCPIngressRule struct {
	Host string `json:"host,omitempty"`
}

// TCPIngressStatus holds the load balancer Kong's proxy is reached at.
type TCPIngressStatus struct {
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
func (t *TCPIngress) DeepCopyObject() runtime.Object {
	c := *t
	c.ObjectMeta = *t.ObjectMeta.DeepCopy()
	c.Spec.Rules = slices.Clone(t.Spec.Rules)
	c.Status.LoadBalancer.Ingress = slices.Clone(t.Status.LoadBalancer.Ingress)
	return &c
}

// transformTCPIngress is the informer's transform; a TCPIngress that
// cannot be read is kept with invalid set (to be reported), never
// returned as an error, which would stall the informer.
func transformTCPIngress(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		t := &TCPIngress{}
		t.TypeMeta, t.ObjectMeta, t.invalid = source.FromUnstructured(u, keep, map[string]any{"spec": &t.Spec, "status": &t.Status})
		return t, nil
	}
}

// sameTCPIngress reports whether two versions of a TCPIngress want the
// same endpoints.
func sameTCPIngress(a, b *TCPIngress) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		slices.Equal(a.Spec.Rules, b.Spec.Rules) && (a.invalid == nil) == (b.invalid == nil) &&
		slices.Equal(a.Status.LoadBalancer.Ingress, b.Status.LoadBalancer.Ingress)
}
