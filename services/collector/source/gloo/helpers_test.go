package gloo_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/gloo"
)

var (
	proxies         = schema.GroupVersionResource{Group: "gloo.solo.io", Version: "v1", Resource: "proxies"}
	virtualServices = schema.GroupVersionResource{Group: "gateway.solo.io", Version: "v1", Resource: "virtualservices"}
	gateways        = schema.GroupVersionResource{Group: "gateway.solo.io", Version: "v1", Resource: "gateways"}
)

// vhost is a virtual host of a Proxy: its domains and where it came from,
// "kind namespace/name" entries in the older (metadata) or newer
// (metadataStatic) form.
type vhost struct {
	domains []string
	sources []source
	static  bool
}

type source struct{ kind, ns, name string }

// proxy is a gloo.solo.io Proxy with one HTTP listener, made from the
// given Gateways (metadataStatic of the listener).
func proxy(name string, annotations map[string]string, gatewayRefs []source, vhosts ...vhost) *unstructured.Unstructured {
	var vhs []any
	for _, v := range vhosts {
		domains := make([]any, len(v.domains))
		for i, d := range v.domains {
			domains[i] = d
		}
		var srcs []any
		for _, s := range v.sources {
			if v.static {
				srcs = append(srcs, map[string]any{"resourceKind": s.kind, "resourceRef": map[string]any{"name": s.name, "namespace": s.ns}})
			} else {
				srcs = append(srcs, map[string]any{"kind": s.kind, "name": s.name, "namespace": s.ns})
			}
		}
		vh := map[string]any{"name": "vh", "domains": domains}
		if v.static {
			vh["metadataStatic"] = map[string]any{"sources": srcs}
		} else {
			vh["metadata"] = map[string]any{"sources": srcs}
		}
		vhs = append(vhs, vh)
	}
	listener := map[string]any{"name": "listener", "bindAddress": "::", "bindPort": int64(8080),
		"httpListener": map[string]any{"virtualHosts": vhs}}
	if len(gatewayRefs) > 0 {
		var srcs []any
		for _, g := range gatewayRefs {
			srcs = append(srcs, map[string]any{"resourceKind": g.kind, "resourceRef": map[string]any{"name": g.name, "namespace": g.ns}})
		}
		listener["metadataStatic"] = map[string]any{"sources": srcs}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gloo.solo.io/v1", "kind": "Proxy",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"listeners": []any{listener}},
	}}
	u.SetAnnotations(annotations)
	return u
}

// virtualService is a gateway.solo.io VirtualService with annotations.
func virtualService(name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.solo.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"virtualHost": map[string]any{"domains": []any{"*"}}},
	}}
	u.SetAnnotations(annotations)
	return u
}

// gateway is a gateway.solo.io Gateway with annotations.
func gateway(name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.solo.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"bindAddress": "::", "bindPort": int64(8080), "httpGateway": map[string]any{}},
	}}
	u.SetAnnotations(annotations)
	return u
}

// proxyService is the LoadBalancer Service of a Proxy (same name), its
// load balancer entries IPs or hostnames.
func proxyService(t *testing.T, ns, name string, typ corev1.ServiceType, lb ...string) *corev1.Service {
	t.Helper()
	var ing []corev1.LoadBalancerIngress
	for _, a := range lb {
		if _, err := netip.ParseAddr(a); err == nil {
			ing = append(ing, corev1.LoadBalancerIngress{IP: a})
		} else {
			ing = append(ing, corev1.LoadBalancerIngress{Hostname: a})
		}
	}
	return collectortest.CreateService(t, ns, collectortest.Service(name, typ, nil), ing...)
}

func create(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, ns string, u *unstructured.Unstructured) {
	t.Helper()
	collectortest.CreateObject(t, dc, gvr, ns, u)
}

// config reads Proxies in ns.
func config(ns string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Sources: []string{gloo.Name}}
	cfg.Gloo.Namespaces = []string{ns}
	return cfg
}

func subject(ns, name string) string {
	return events.SourceSubject(ns, gloo.Name, ns, name)
}

// routed is e with a set identifier and an AWS geolocation.
func routed(e events.Endpoint, id, country string) events.Endpoint {
	e.SetIdentifier = id
	e.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "aws/geolocation-country-code", Value: country}}
	return e
}
