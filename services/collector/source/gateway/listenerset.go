package gateway

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// ListenerSets (gateway.networking.k8s.io/v1, Gateway API v1.5 and
// later), read with --gateway-listener-sets as ExternalDNS v0.23 reads
// them: a route whose parent is a ListenerSet attaches to the
// ListenerSet's listeners, at its parent Gateway's addresses.

// ListenerSetKind is the kind of a ListenerSet parentRef.
const ListenerSetKind = "ListenerSet"

// ReasonInvalidListenerSet is the event reason of a ListenerSet that does
// not decode or carries an invalid target annotation entry.
const ReasonInvalidListenerSet = "InvalidListenerSet"

// indexListenerSetGateway indexes ListenerSets by their parent Gateway's
// namespace/name: what a Gateway change looks up.
const indexListenerSetGateway = "zonestream/listenerset-gateway"

// listenerSetIndexKey is the key routes are indexed under (indexParent)
// for a ListenerSet parent; a Gateway's is its plain namespace/name.
func listenerSetIndexKey(key string) string { return ListenerSetKind + ":" + key }

// listenerSetGatewayKey is the namespace/name of a ListenerSet's parent
// Gateway; its namespace defaults to the ListenerSet's.
func listenerSetGatewayKey(ls *gwv1.ListenerSet) string {
	ns := ls.Namespace
	if ref := ls.Spec.ParentRef; ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return ns + "/" + string(ls.Spec.ParentRef.Name)
}

func listenerSetGatewayKeys(obj any) ([]string, error) {
	if ls, ok := obj.(*gwv1.ListenerSet); ok {
		return []string{listenerSetGatewayKey(ls)}, nil
	}
	return nil, nil
}

// listenerSetTransform keeps of a ListenerSet its external-dns
// annotations (and those keep names), parentRef, listeners without TLS
// settings, and of its conditions and its listeners' only Accepted=True.
func listenerSetTransform(keep []string) cache.TransformFunc {
	return decodeTransform(keep, nil, func() any { return &gwv1.ListenerSet{} }, func(obj any) {
		ls := obj.(*gwv1.ListenerSet)
		for i := range ls.Spec.Listeners {
			ls.Spec.Listeners[i].TLS = nil
		}
		ls.Status.Conditions = acceptedOnly(ls.Status.Conditions)
		for i := range ls.Status.Listeners {
			l := &ls.Status.Listeners[i]
			l.SupportedKinds = nil
			l.Conditions = acceptedOnly(l.Conditions)
		}
	})
}

func acceptedOnly(conds []metav1.Condition) []metav1.Condition {
	if !accepted(conds) {
		return nil
	}
	return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue}}
}

// newListenerSetInformer makes the lazyinformer of ListenerSets, in every
// namespace: neither --namespace nor --gateway-namespace limits them, as
// in ExternalDNS (a route may attach to a ListenerSet elsewhere).
func (s *Source) newListenerSetInformer(common lazyinformer.Options, keep []string) (*lazyinformer.Informer, error) {
	o := common
	o.Kind, o.Namespace = ListenerSetKind, ""
	o.OnSynced = func(context.Context) { close(s.listenerSetsSynced) }
	o.Transform = listenerSetTransform(keep)
	o.Indexers = cache.Indexers{indexListenerSetGateway: listenerSetGatewayKeys, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	o.Handler = cache.ResourceEventHandlerFuncs{
		AddFunc:    s.listenerSetChanged,
		UpdateFunc: func(_, obj any) { s.listenerSetChanged(obj) },
		DeleteFunc: s.listenerSetChanged,
	}
	return lazyinformer.New(o)
}

// listenerSetChanged enqueues the routes attached to a ListenerSet.
func (s *Source) listenerSetChanged(obj any) {
	if k, err := source.KeyOf(obj); err == nil {
		s.enqueueRoutesOf(listenerSetIndexKey(k.String()))
	}
}

// listenerSetsOf calls f with the cache key of every ListenerSet of the
// index value (a Gateway key or a namespace).
func (s *Source) listenerSetsOf(index, value string, f func(key string)) {
	if s.listenerSets == nil {
		return
	}
	idx := s.listenerSets.Indexer()
	if idx == nil {
		return
	}
	objs, err := idx.ByIndex(index, value)
	if err != nil {
		return
	}
	for _, o := range objs {
		if k, err := source.KeyOf(o); err == nil {
			f(k.String())
		}
	}
}

// listenerSetAttachment is what a route's ListenerSet parent key gives:
// the ListenerSet's accepted listeners on its parent Gateway, if the
// ListenerSet exists, passes --annotation-filter and its controller
// annotation, was accepted, and its Gateway exists, passes the Gateway
// flags and allows ListenerSets from its namespace.
func (s *Source) listenerSetAttachment(r route, key string, problems *[]error) (attachment, bool) {
	if s.listenerSets == nil {
		return attachment{}, false
	}
	idx := s.listenerSets.Indexer()
	if idx == nil {
		return attachment{}, false
	}
	obj, exists, err := idx.GetByKey(key)
	if err != nil || !exists {
		return attachment{}, false
	}
	ls, ok := obj.(*gwv1.ListenerSet)
	if !ok {
		*problems = append(*problems, &source.Problem{Object: runtimeObject(obj), Reason: ReasonInvalidListenerSet,
			Err: fmt.Errorf("ListenerSet %s does not decode as %s", key, GroupVersion.WithKind(ListenerSetKind))})
		return attachment{}, false
	}
	if !source.Controlled(ls.Annotations) ||
		(s.opts.Filters.Annotations != nil && !s.opts.Filters.Annotations.Matches(labels.Set(ls.Annotations))) {
		return attachment{}, false
	}
	gwKey := listenerSetGatewayKey(ls)
	gw, err := s.gateway(gwKey)
	if err != nil {
		*problems = append(*problems, &source.Problem{Object: r, Reason: ReasonInvalidGateway, Field: "status.parents",
			Err: fmt.Errorf("Gateway %s of ListenerSet %s: %w", gwKey, key, err)})
		return attachment{}, false
	}
	if gw == nil || !s.allowsListenerSet(gw, ls) || !accepted(ls.Status.Conditions) {
		return attachment{}, false
	}
	var listeners []gwv1.Listener
	for _, e := range ls.Spec.Listeners {
		if slices.ContainsFunc(ls.Status.Listeners, func(st gwv1.ListenerEntryStatus) bool {
			return st.Name == e.Name && accepted(st.Conditions)
		}) {
			listeners = append(listeners, gwv1.Listener(e))
		}
	}
	in := source.NewInputs(ls)
	targets := in.Targets()
	*problems = append(*problems, in.Problems...)
	return attachment{gw: gw, owner: ls.Namespace, listeners: listeners, targets: targets}, true
}

// allowsListenerSet applies a Gateway's spec.allowedListeners to a
// ListenerSet's namespace: None (the default), Same, All, or Selector over
// the namespace's labels.
func (s *Source) allowsListenerSet(gw *gwv1.Gateway, ls *gwv1.ListenerSet) bool {
	a := gw.Spec.AllowedListeners
	if a == nil || a.Namespaces == nil || a.Namespaces.From == nil {
		return false
	}
	switch *a.Namespaces.From {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return gw.Namespace == ls.Namespace
	case gwv1.NamespacesFromSelector:
		if a.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(a.Namespaces.Selector)
		if err != nil {
			return false
		}
		nsLabels, ok := s.namespaceLabels(ls.Namespace)
		return ok && sel.Matches(nsLabels)
	}
	return false
}

// hasListenerSetParent reports whether a route's status names a
// ListenerSet parent.
func hasListenerSetParent(r route) bool {
	_, st := routeParts(r)
	return slices.ContainsFunc(st.Parents, func(p gwv1.RouteParentStatus) bool {
		kind, _, ok := parentKey(p.ParentRef, r.GetNamespace())
		return ok && kind == ListenerSetKind
	})
}
