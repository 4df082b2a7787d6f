// Package istio holds the collector's Istio sources, istio-gateway and
// istio-virtualservice: DNS names from the hosts of networking.istio.io
// Gateways and VirtualServices, with the addresses of the ingress Services
// the Gateways select, by the rules of ExternalDNS' Istio sources (see
// README.md beside this file).
//
// Istio's CRDs may be installed after the collector started: the sources
// read them through lazyinformer, which starts the informers when the
// resources appear.
package istio

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// GroupVersion is the Istio API the sources read (Istio 1.22 and later
// serve v1).
var GroupVersion = schema.GroupVersion{Group: "networking.istio.io", Version: "v1"}

// Event reasons of the Istio sources besides the shared ones.
const (
	// ReasonInvalidSpec: the object's spec does not have the shape of
	// Istio's API (a string where a list is expected, ...).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidGatewayReference: a VirtualService's spec.gateways
	// entry is not "[namespace/]name".
	ReasonInvalidGatewayReference = "InvalidGatewayReference"
)

// Flags are the settings only the Istio sources have; none is a flag.
type Flags struct {
	// PollInterval is how often discovery is asked whether Istio's
	// resources are served, while they are not (default
	// lazyinformer.DefaultPollInterval).
	PollInterval time.Duration
}

// Options configure an Istio source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}

// Informer indexes.
const (
	// indexSelectorPair indexes Services by every "key=value" of their
	// spec.selector, and Gateways by every "key=value" of theirs
	// (selectorAll for an empty one): a changed Service finds the
	// Gateways selecting it, a Gateway the Services it selects.
	indexSelectorPair = "zonestream/istio-selector"
	selectorAll       = "*"
	// indexGatewayRef indexes VirtualServices by the "namespace/name" of
	// each Gateway they name.
	indexGatewayRef = "zonestream/istio-gateway"
)

// base is what both sources share: the Gateways and the Services their
// targets come from.
type base struct {
	opts      Options
	dynamic   dynamic.Interface
	gateways  *lazyinformer.Informer
	services  corelisters.ServiceLister
	svcIndex  cache.Indexer
	ingresses networkinglisters.IngressLister
	// resync is the collector's Runtime.Resync, set by Run before the lazy
	// informers start.
	resync func()
}

func newBase(opts Options) (*base, error) {
	dyn, err := opts.Dynamic("istio")
	if err != nil {
		return nil, err
	}
	return &base{opts: opts, dynamic: dyn, resync: func() {}}, nil
}

// lazy returns a lazy informer for kind.
func (b *base) lazy(kind string, transform cache.TransformFunc, indexers cache.Indexers,
	handler cache.ResourceEventHandler, onSynced func()) (*lazyinformer.Informer, error) {
	return lazyinformer.New(lazyinformer.Options{
		Discovery: b.opts.Client.Discovery(), Dynamic: b.dynamic, GroupVersion: GroupVersion, Kind: kind,
		Namespace: b.opts.Namespace, PollInterval: b.opts.PollInterval,
		Transform: transform, Indexers: indexers, Handler: handler,
		OnSynced: func(context.Context) { onSynced() }, Logger: b.opts.Logger,
	})
}

// registerServices installs the Service index and a handler that calls
// changed with the old and new state of every Service whose selector or
// addresses changed.
func (b *base) registerServices(factory informers.SharedInformerFactory, changed func(svcs ...*corev1.Service)) (cache.InformerSynced, error) {
	inf := factory.Core().V1().Services()
	if err := source.AddIndexer(inf.Informer(), indexSelectorPair, serviceSelectorPairs); err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	b.services, b.svcIndex = inf.Lister(), inf.Informer().GetIndexer()
	one := func(obj any) {
		if svc, ok := source.Unwrap(obj).(*corev1.Service); ok {
			changed(svc)
		}
	}
	reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: one,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Service)
			c, _ := cur.(*corev1.Service)
			if o == nil || c == nil || sameIngress(o, c) {
				return
			}
			changed(o, c)
		},
		DeleteFunc: one,
	})
	if err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	return reg.HasSynced, nil
}

// sameIngress reports whether two versions of a Service give the Gateways
// selecting them the same targets.
func sameIngress(a, b *corev1.Service) bool {
	return maps.Equal(a.Spec.Selector, b.Spec.Selector) && slices.Equal(a.Spec.ExternalIPs, b.Spec.ExternalIPs) &&
		slices.EqualFunc(a.Status.LoadBalancer.Ingress, b.Status.LoadBalancer.Ingress,
			func(x, y corev1.LoadBalancerIngress) bool { return x.IP == y.IP && x.Hostname == y.Hostname })
}

func serviceSelectorPairs(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, nil
	}
	var keys []string
	for k, v := range svc.Spec.Selector {
		keys = append(keys, k+"="+v)
	}
	return keys, nil
}

func gatewaySelectorPairs(obj any) ([]string, error) {
	g, ok := obj.(*Gateway)
	if !ok {
		return nil, nil
	}
	if len(g.Spec.Selector) == 0 {
		return []string{selectorAll}, nil
	}
	keys := make([]string, 0, len(g.Spec.Selector))
	for k, v := range g.Spec.Selector {
		keys = append(keys, k+"="+v)
	}
	return keys, nil
}

// gatewaysSelecting returns the Gateways whose selector matches the
// spec.selector of any of the Services (as ExternalDNS matches them: the
// Gateway's selector against the Service's selector, not its labels).
func (b *base) gatewaysSelecting(svcs ...*corev1.Service) []*Gateway {
	idx := b.gateways.Indexer()
	if idx == nil {
		return nil
	}
	seen := map[string]*Gateway{}
	for _, svc := range svcs {
		keys := []string{selectorAll}
		for k, v := range svc.Spec.Selector {
			keys = append(keys, k+"="+v)
		}
		for _, key := range keys {
			objs, _ := idx.ByIndex(indexSelectorPair, key)
			for _, o := range objs {
				g, ok := o.(*Gateway)
				if ok && labels.SelectorFromSet(g.Spec.Selector).Matches(labels.Set(svc.Spec.Selector)) {
					seen[g.Namespace+"/"+g.Name] = g
				}
			}
		}
	}
	return slices.Collect(maps.Values(seen))
}

// selectedServices returns the Services a Gateway selects, sorted.
func (b *base) selectedServices(g *Gateway) []*corev1.Service {
	var svcs []*corev1.Service
	if len(g.Spec.Selector) == 0 {
		svcs, _ = b.services.List(labels.Everything())
	} else {
		// Any one pair of the selector narrows the candidates.
		k := slices.Sorted(maps.Keys(g.Spec.Selector))[0]
		objs, _ := b.svcIndex.ByIndex(indexSelectorPair, k+"="+g.Spec.Selector[k])
		sel := labels.SelectorFromSet(g.Spec.Selector)
		for _, o := range objs {
			if svc, ok := o.(*corev1.Service); ok && sel.Matches(labels.Set(svc.Spec.Selector)) {
				svcs = append(svcs, svc)
			}
		}
	}
	slices.SortFunc(svcs, func(a, b *corev1.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return svcs
}

// gatewayTargets are a Gateway's targets: its target annotation's valid
// entries, else those of the Ingress its ingress annotation names, else,
// of every Service it selects, spec.externalIPs or else each load
// balancer ingress's IP, or its hostname when it has no IP.
// Problems of the annotation go to in (nil: not reported).
func (b *base) gatewayTargets(g *Gateway, in *source.Inputs) []string {
	if in == nil {
		in = source.NewInputs(g)
	}
	if t := in.Targets(); len(t) > 0 {
		return t
	}
	if t, named := b.ingressTargets(g, in); named {
		return t
	}
	var out []string
	for _, svc := range b.selectedServices(g) {
		if len(svc.Spec.ExternalIPs) > 0 {
			out = append(out, svc.Spec.ExternalIPs...)
			continue
		}
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			out = appendIPOrHostname(out, lb.IP, lb.Hostname)
		}
	}
	return out
}

// splitHost splits "[namespace/]host"; ok is false for more than one '/'.
func splitHost(s string) (namespace, host string, ok bool) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 1:
		return "", parts[0], true
	case 2:
		return parts[0], parts[1], true
	}
	return "", "", false
}

// names collects the hostnames of an object: its spec hosts (given), the
// hostname annotation unless ignored, and the template when those gave
// nothing or with --combine-fqdn-annotation.
func (b *base) names(in *source.Inputs, specHosts []string, field string) []string {
	var names []string
	for _, h := range specHosts {
		_, host, ok := splitHost(h)
		if !ok {
			in.Problem(source.ReasonInvalidHostname, field, fmt.Errorf("host %q is not [namespace/]host", h))
			continue
		}
		host = strings.TrimSuffix(strings.TrimSpace(host), ".")
		if host == "" || host == "*" {
			continue
		}
		names = append(names, in.ValidHostnames([]string{host}, field, source.ReasonInvalidHostname)...)
	}
	if !b.opts.IgnoreHostnameAnnotation {
		names = append(names, in.Hostnames(source.AnnotationHostname)...)
	}
	if b.opts.FQDNTemplate != nil && (len(names) == 0 || b.opts.CombineFQDNAnnotation) {
		names = append(names, in.TemplateNames(b.opts.FQDNTemplate)...)
	}
	return names
}

// appendIPOrHostname appends a load balancer's IP, or its hostname when it
// has no IP, as ExternalDNS' Istio sources take them.
func appendIPOrHostname(out []string, ip, hostname string) []string {
	switch {
	case ip != "":
		return append(out, ip)
	case hostname != "":
		return append(out, hostname)
	}
	return out
}

// errs is err as the Endpoints result's list of problems.
func errs(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}
