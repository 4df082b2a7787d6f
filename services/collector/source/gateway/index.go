package gateway

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/services/collector/source"
)

// indexParent indexes routes by every parent in their status.parents: a
// Gateway's namespace/name, a ListenerSet's listenerSetIndexKey. What a
// Gateway or ListenerSet change looks up.
const indexParent = "zonestream/parent-gateway"

func parentKeys(obj any) ([]string, error) {
	r, ok := obj.(route)
	if !ok || isUnstructured(obj) {
		return nil, nil
	}
	_, st := routeParts(r)
	var keys []string
	for _, p := range st.Parents {
		kind, k, ok := parentKey(p.ParentRef, r.GetNamespace())
		if !ok {
			continue
		}
		if kind == ListenerSetKind {
			k = listenerSetIndexKey(k)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// parentKey is the kind (Gateway or ListenerSet) and namespace/name of
// the parent a parentRef names, false when it names another kind.
func parentKey(ref gwv1.ParentReference, routeNamespace string) (kind, key string, ok bool) {
	group, kind := Group, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if group != Group || (kind != "Gateway" && kind != ListenerSetKind) {
		return "", "", false
	}
	ns := routeNamespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return kind, ns + "/" + string(ref.Name), true
}

// gatewayChanged enqueues the routes attached to a Gateway, and to its
// ListenerSets.
func (s *Source) gatewayChanged(obj any) {
	k, err := source.KeyOf(obj)
	if err != nil {
		return
	}
	s.enqueueRoutesOf(k.String())
	s.listenerSetsOf(indexListenerSetGateway, k.String(), func(ls string) { s.enqueueRoutesOf(listenerSetIndexKey(ls)) })
}

// enqueueRoutesOf enqueues the routes whose parents hold the indexParent
// key.
func (s *Source) enqueueRoutesOf(key string) {
	idx := s.routes.Indexer()
	if idx == nil {
		return
	}
	objs, err := idx.ByIndex(indexParent, key)
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

// namespaceChanged enqueues the routes whose namespace's labels may
// decide whether they are allowed: the namespace's routes attached to a
// Gateway or ListenerSet with a listener that selects namespaces by label,
// and the routes of the namespace's ListenerSets (a Gateway may select
// those by their namespace's labels).
func (s *Source) namespaceChanged(obj any) {
	k, err := source.KeyOf(obj)
	if err != nil {
		return
	}
	s.listenerSetsOf(cache.NamespaceIndex, k.Name, func(ls string) { s.enqueueRoutesOf(listenerSetIndexKey(ls)) })
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
		if slices.ContainsFunc(keys, s.selectsNamespaces(gws)) {
			if rk, err := source.KeyOf(o); err == nil {
				s.enqueue(rk)
			}
		}
	}
}

// selectsNamespaces returns whether the parent of an indexParent key (a
// Gateway's in gws, or a ListenerSet's) has a listener whose allowedRoutes
// selects namespaces by label.
func (s *Source) selectsNamespaces(gws cache.Indexer) func(key string) bool {
	return func(key string) bool {
		var listeners []gwv1.Listener
		if ls, ok := strings.CutPrefix(key, listenerSetIndexKey("")); ok {
			if s.listenerSets == nil || s.listenerSets.Indexer() == nil {
				return false
			}
			obj, exists, err := s.listenerSets.Indexer().GetByKey(ls)
			l, ok := obj.(*gwv1.ListenerSet)
			if err != nil || !exists || !ok {
				return false
			}
			for _, e := range l.Spec.Listeners {
				listeners = append(listeners, gwv1.Listener(e))
			}
		} else {
			obj, exists, err := gws.GetByKey(key)
			gw, ok := obj.(*gwv1.Gateway)
			if err != nil || !exists || !ok {
				return false
			}
			listeners = gw.Spec.Listeners
		}
		return selectorListener(listeners)
	}
}

// selectorListener reports whether a listener's allowedRoutes selects
// namespaces by label.
func selectorListener(listeners []gwv1.Listener) bool {
	for _, l := range listeners {
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
