package skipper

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// RouteGroup is what the source keeps of a Skipper RouteGroup: the
// informer turns every object into one, so the cache stays small,
// --fqdn-template sees .Name, .Namespace, .Annotations, .Spec (and
// .Metadata, as ExternalDNS' templates write it), and events can name it.
type RouteGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              RouteGroupSpec   `json:"spec"`
	Status            RouteGroupStatus `json:"status"`
	// invalid is why the spec or status could not be read, reported on
	// the RouteGroup.
	invalid error
}

// Metadata is the object's metadata, for templates written for
// ExternalDNS ({{.Metadata.Name}}).
func (rg *RouteGroup) Metadata() *metav1.ObjectMeta { return &rg.ObjectMeta }

// RouteGroupSpec holds the hosts.
type RouteGroupSpec struct {
	Hosts []string `json:"hosts,omitempty"`
}

// RouteGroupStatus holds the load balancer Skipper's controller reports.
type RouteGroupStatus struct {
	LoadBalancer LoadBalancerStatus `json:"loadBalancer"`
}

// LoadBalancerStatus is status.loadBalancer: "routegroup" in Skipper's
// CRD (ExternalDNS decodes it as "routeGroup", which Go's JSON matches
// case-insensitively: both are read).
type LoadBalancerStatus struct {
	RouteGroup      []LoadBalancer `json:"routegroup,omitempty"`
	RouteGroupCamel []LoadBalancer `json:"routeGroup,omitempty"`
}

// LoadBalancer is one load balancer entry.
type LoadBalancer struct {
	IP       string `json:"ip,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// entries are the load balancer entries under either spelling.
func (s LoadBalancerStatus) entries() []LoadBalancer {
	return append(slices.Clone(s.RouteGroup), s.RouteGroupCamel...)
}

// DeepCopyObject implements runtime.Object.
func (rg *RouteGroup) DeepCopyObject() runtime.Object {
	c := *rg
	c.ObjectMeta = *rg.ObjectMeta.DeepCopy()
	c.Spec.Hosts = slices.Clone(rg.Spec.Hosts)
	c.Status.LoadBalancer = LoadBalancerStatus{RouteGroup: slices.Clone(rg.Status.LoadBalancer.RouteGroup),
		RouteGroupCamel: slices.Clone(rg.Status.LoadBalancer.RouteGroupCamel)}
	return &c
}

// transformRouteGroup is the informer's transform: it keeps the metadata
// (the annotations under an external-dns prefix and those of keep), the
// hosts and the load balancer status. A spec or status that cannot be
// read is kept as invalid (to be reported), never returned as an error,
// which would stall the informer.
func transformRouteGroup(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		rg := &RouteGroup{
			TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
				ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(),
				Annotations: source.KeepAnnotations(u.GetAnnotations(), keep...)},
		}
		if spec, ok := u.Object["spec"].(map[string]any); ok {
			var full struct {
				Hosts []string `json:"hosts,omitempty"`
			}
			rg.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &full)
			rg.Spec.Hosts = full.Hosts
		}
		if status, ok := u.Object["status"].(map[string]any); ok && rg.invalid == nil {
			rg.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &rg.Status)
		}
		return rg, nil
	}
}

// sameRouteGroup reports whether two versions of a RouteGroup are the
// same to the source.
func sameRouteGroup(a, b *RouteGroup) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		slices.Equal(a.Spec.Hosts, b.Spec.Hosts) &&
		slices.Equal(a.Status.LoadBalancer.entries(), b.Status.LoadBalancer.entries()) &&
		(a.invalid == nil) == (b.invalid == nil)
}
