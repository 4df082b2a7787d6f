package gateway

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/services/collector/source"
)

// The transforms turn the dynamic informers' unstructured objects into
// typed ones holding only what the source reads: metadata without
// managedFields and foreign annotations (source.Transform), no route
// rules, no Gateway TLS settings or status conditions, and of a route's
// parent conditions only whether Accepted is True. An object that does not
// decode stays unstructured, trimmed alike, and is reported when read.

// gatewayTransform keeps of a Gateway its labels, external-dns
// annotations, listeners (name, hostname, port, protocol, allowedRoutes)
// and status.addresses.
func gatewayTransform(keep []string) cache.TransformFunc {
	return decodeTransform(keep, nil, func() any { return &gwv1.Gateway{} }, func(obj any) {
		gw := obj.(*gwv1.Gateway)
		gw.Spec.Infrastructure = nil
		gw.Spec.TLS = nil
		for i := range gw.Spec.Listeners {
			gw.Spec.Listeners[i].TLS = nil
		}
		gw.Status.Conditions = nil
		gw.Status.Listeners = nil
	})
}

// decodeTransform trims an unstructured object (source.Transform with
// keep, then the fields at drop), decodes it into a fresh newObj and lets
// trim cut the typed object down. Trimming before decoding saves most of
// the cost: managedFields and route rules are most of an object.
func decodeTransform(keep []string, drop [][]string, newObj func() any, trim func(any)) cache.TransformFunc {
	meta := source.Transform(keep...)
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		if _, err := meta(u); err != nil {
			return nil, err
		}
		for _, path := range drop {
			unstructured.RemoveNestedField(u.Object, path...)
		}
		typed := newObj()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return u, nil
		}
		trim(typed)
		return typed, nil
	}
}

// routeTransform decodes a route of kind k without its rules, keeping of
// each parent's conditions only Accepted=True.
func routeTransform(k Kind, keep []string) cache.TransformFunc {
	return decodeTransform(keep, [][]string{{"spec", "rules"}}, func() any { return k.newObject() }, func(obj any) {
		_, st := routeParts(obj.(route))
		for i := range st.Parents {
			p := &st.Parents[i]
			p.ControllerName = ""
			var kept []metav1.Condition
			if accepted(p.Conditions) {
				kept = []metav1.Condition{{Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionTrue}}
			}
			p.Conditions = kept
		}
	})
}

// accepted reports whether a parent's conditions say Accepted=True.
func accepted(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == string(gwv1.RouteConditionAccepted) {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// namespaceTransform keeps of a Namespace its name and labels: what an
// allowedRoutes namespace selector matches.
func namespaceTransform(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
		},
	}, nil
}
