package openshift

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Route is what the source keeps of a route.openshift.io Route: the
// routers' verdicts in its status; --fqdn-template sees .Name,
// .Namespace, .Annotations, .Spec.Host as on OpenShift's own type.
type Route struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              RouteSpec   `json:"spec"`
	Status            RouteStatus `json:"status"`
	// invalid is why the spec or status could not be read, reported on
	// the Route.
	invalid error
}

// RouteSpec holds the host the Route asks for (for templates only: the
// source takes the host a router admitted).
type RouteSpec struct {
	Host string `json:"host,omitempty"`
}

// RouteStatus lists every router's verdict on the Route.
type RouteStatus struct {
	Ingress []RouteIngress `json:"ingress,omitempty"`
}

// RouteIngress is one router's verdict: the host it serves the Route at,
// and the name clients reach the router by.
type RouteIngress struct {
	Host                    string                  `json:"host,omitempty"`
	RouterName              string                  `json:"routerName,omitempty"`
	RouterCanonicalHostname string                  `json:"routerCanonicalHostname,omitempty"`
	Conditions              []RouteIngressCondition `json:"conditions,omitempty"`
}

// RouteIngressCondition is a condition of a router's verdict; the source
// reads Admitted.
type RouteIngressCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// DeepCopyObject implements runtime.Object.
func (r *Route) DeepCopyObject() runtime.Object {
	c := *r
	c.ObjectMeta = *r.ObjectMeta.DeepCopy()
	c.Status.Ingress = make([]RouteIngress, len(r.Status.Ingress))
	for i, ing := range r.Status.Ingress {
		ing.Conditions = slices.Clone(ing.Conditions)
		c.Status.Ingress[i] = ing
	}
	return &c
}

// transformRoute is the informer's transform. A Route that cannot be read
// is kept with invalid set (to be reported), never returned as an error,
// which would stall the informer.
func transformRoute(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		r := &Route{}
		r.TypeMeta, r.ObjectMeta, r.invalid = source.FromUnstructured(u, keep, map[string]any{"spec": &r.Spec, "status": &r.Status})
		return r, nil
	}
}

// sameRoute reports whether two versions of a Route want the same
// endpoints.
func sameRoute(a, b *Route) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		a.Spec == b.Spec && (a.invalid == nil) == (b.invalid == nil) &&
		slices.EqualFunc(a.Status.Ingress, b.Status.Ingress, func(x, y RouteIngress) bool {
			return x.Host == y.Host && x.RouterName == y.RouterName && x.RouterCanonicalHostname == y.RouterCanonicalHostname &&
				slices.Equal(x.Conditions, y.Conditions)
		})
}
