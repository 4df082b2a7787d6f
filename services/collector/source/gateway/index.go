package gateway

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/services/collector/source"
)

// indexParent indexes routes by the namespace/name of every Gateway in
// their status.parents: what a Gateway change looks up.
const indexParent = "zonestream/parent-gateway"

func parentKeys(obj any) ([]string, error) {
	r, ok := obj.(route)
	if !ok || isUnstructured(obj) {
		return nil, nil
	}
	_, st := routeParts(r)
	var keys []string
	for _, p := range st.Parents {
		if k, ok := gatewayKey(p.ParentRef, r.GetNamespace()); ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// gatewayKey is the namespace/name of the Gateway a parentRef names, false
// when it names something else than a Gateway.
func gatewayKey(ref gwv1.ParentReference, routeNamespace string) (string, bool) {
	group, kind := Group, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if group != Group || kind != "Gateway" {
		return "", false
	}
	ns := routeNamespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return ns + "/" + string(ref.Name), true
}

// gatewayChanged enqueues the routes attached to a Gateway.
func (s *Source) gatewayChanged(obj any) {
	k, err := source.KeyOf(obj)
	if err != nil {
		return
	}
	idx := s.routes.Indexer()
	if idx == nil {
		return
	}
	objs, err := idx.ByIndex(indexParent, k.String())
	if err != nil {
		return
	}
	for _, o := range objs {
		if rk, err := source.KeyOf(o); err == nil {
			s.enqueue(rk)
		}
	}
}

// gatewayDiffers reports whether an update changed what routes read of a
// Gateway (its status conditions, dropped by the transform, do not count).
func gatewayDiffers(old, obj any) bool {
	a, ok1 := old.(*gwv1.Gateway)
	b, ok2 := obj.(*gwv1.Gateway)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(a.Labels, b.Labels) ||
		!equality.Semantic.DeepEqual(a.Annotations, b.Annotations) ||
		!equality.Semantic.DeepEqual(a.Spec, b.Spec) ||
		!equality.Semantic.DeepEqual(a.Status.Addresses, b.Status.Addresses)
}

// namespaceChanged enqueues the routes of a namespace whose labels may
// decide whether they are allowed: those attached to a Gateway with a
// listener that selects namespaces by label.
func (s *Source) namespaceChanged(obj any) {
	k, err := source.KeyOf(obj)
	if err != nil {
		return
	}
	idx, gws := s.routes.Indexer(), s.gateways.Indexer()
	if idx == nil || gws == nil {
		return
	}
	objs, err := idx.ByIndex(cache.NamespaceIndex, k.Name)
	if err != nil {
		return
	}
	for _, o := range objs {
		keys, _ := parentKeys(o)
		if slices.ContainsFunc(keys, func(gk string) bool { return selectsNamespaces(gws, gk) }) {
			if rk, err := source.KeyOf(o); err == nil {
				s.enqueue(rk)
			}
		}
	}
}

// selectsNamespaces reports whether the Gateway key has a listener whose
// allowedRoutes selects namespaces by label.
func selectsNamespaces(gws cache.Indexer, key string) bool {
	obj, exists, err := gws.GetByKey(key)
	if err != nil || !exists {
		return false
	}
	gw, ok := obj.(*gwv1.Gateway)
	if !ok {
		return false
	}
	for _, l := range gw.Spec.Listeners {
		if a := l.AllowedRoutes; a != nil && a.Namespaces != nil && a.Namespaces.From != nil &&
			*a.Namespaces.From == gwv1.NamespacesFromSelector {
			return true
		}
	}
	return false
}

func isUnstructured(obj any) bool {
	_, ok := obj.(*unstructured.Unstructured)
	return ok
}

func runtimeObject(obj any) runtime.Object {
	if o, ok := obj.(runtime.Object); ok {
		return o
	}
	return nil
}
