package istio_test

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// Istio's CRDs are not part of the test apiserver: testdata holds
// minimal ones (no schema), installed on first use.
const istioCRDDir = "testdata"

const istioPoll = 100 * time.Millisecond

var (
	istioOnce sync.Once
	istioErr  error

	istioGateways        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "gateways"}
	istioVirtualServices = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
)

func installIstio(t *testing.T) dynamic.Interface {
	t.Helper()
	istioOnce.Do(func() { istioErr = collectortest.Cluster.InstallCRDs(istioCRDDir) })
	if istioErr != nil {
		t.Fatal(istioErr)
	}
	return collectortest.DynamicClient(t, collectortest.Cluster.Config)
}

func istioConfig(ns string, sources ...string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: sources}
	cfg.Istio.PollInterval = istioPoll
	return cfg
}

// istioGateway is an Istio Gateway with one server per hosts entry.
func istioGateway(name string, annotations map[string]string, selector map[string]string, hosts ...[]string) *unstructured.Unstructured {
	var servers []any
	for _, h := range hosts {
		hs := make([]any, len(h))
		for i, x := range h {
			hs[i] = x
		}
		servers = append(servers, map[string]any{"port": map[string]any{"number": int64(80), "name": "http", "protocol": "HTTP"}, "hosts": hs})
	}
	sel := map[string]any{}
	for k, v := range selector {
		sel[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"selector": sel, "servers": servers},
	}}
	u.SetAnnotations(annotations)
	return u
}

func istioVirtualService(name string, annotations map[string]string, hosts, gateways []string, exportTo ...string) *unstructured.Unstructured {
	list := func(ss []string) []any {
		out := make([]any, len(ss))
		for i, s := range ss {
			out[i] = s
		}
		return out
	}
	spec := map[string]any{"hosts": list(hosts), "gateways": list(gateways)}
	if len(exportTo) > 0 {
		spec["exportTo"] = list(exportTo)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
	u.SetAnnotations(annotations)
	return u
}

// ingressService is an Istio ingress gateway Service: selector
// istio=<name>, load balancer status lb (IPs or hostnames).
func ingressService(name string, labels map[string]string, lb ...string) (*corev1.Service, []corev1.LoadBalancerIngress) {
	svc := collectortest.Service(name, corev1.ServiceTypeLoadBalancer, nil)
	svc.Labels = labels
	svc.Spec.Selector = map[string]string{"istio": name}
	var ing []corev1.LoadBalancerIngress
	for _, a := range lb {
		if ipLike(a) {
			ing = append(ing, corev1.LoadBalancerIngress{IP: a})
		} else {
			ing = append(ing, corev1.LoadBalancerIngress{Hostname: a})
		}
	}
	return svc, ing
}

func ipLike(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

func createIngressService(t *testing.T, ns, name string, labels map[string]string, lb ...string) *corev1.Service {
	t.Helper()
	s, ing := ingressService(name, labels, lb...)
	return collectortest.CreateService(t, ns, s, ing...)
}

func istioSubject(clusterName, source, ns, name string) string {
	return events.SourceSubject(clusterName, source, ns, name)
}

var istioSel = map[string]string{"istio": "ingressgateway"}
