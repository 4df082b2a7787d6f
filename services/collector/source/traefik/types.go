package traefik

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Route is what the source keeps of an IngressRoute, IngressRouteTCP or
// IngressRouteUDP: its routes' match rules (none kept for UDP, whose
// routes name no host). --fqdn-template sees .Name, .Namespace,
// .Annotations, .Kind.
type Route struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              RouteSpec `json:"spec"`
	// invalid is why the spec could not be read, reported on the object.
	invalid error
}

// RouteSpec holds the routes.
type RouteSpec struct {
	Routes []RouteRule `json:"routes,omitempty"`
}

// RouteRule is one route: its match rule, in Traefik's rule syntax.
type RouteRule struct {
	Match string `json:"match,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (r *Route) DeepCopyObject() runtime.Object {
	c := *r
	c.ObjectMeta = *r.ObjectMeta.DeepCopy()
	c.Spec.Routes = slices.Clone(r.Spec.Routes)
	return &c
}

// transformRoute is the informers' transform; a spec that cannot be read
// is kept as invalid (to be reported), never returned as an error, which
// would stall the informer.
func transformRoute(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		r := &Route{}
		r.TypeMeta, r.ObjectMeta, r.invalid = source.FromUnstructured(u, keep, map[string]any{"spec": &r.Spec})
		return r, nil
	}
}

// sameRoute reports whether two versions of an object want the same
// endpoints.
func sameRoute(a, b *Route) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		slices.Equal(a.Spec.Routes, b.Spec.Routes) && (a.invalid == nil) == (b.invalid == nil)
}
