package systemtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// The ingress controllers' CRDs the sources' rule tables install: each
// project's own definition (see each file's header).
var controllerCRDs = []string{
	"../services/collector/source/ambassador/testdata",
	"../services/collector/source/f5/testdata",
	"../services/collector/source/skipper/testdata",
	"../services/collector/source/gloo/testdata",
}

var (
	ambassadorHosts    = schema.GroupVersionResource{Group: "getambassador.io", Version: "v2", Resource: "hosts"}
	f5VirtualServers   = schema.GroupVersionResource{Group: "cis.f5.com", Version: "v1", Resource: "virtualservers"}
	f5TransportServers = schema.GroupVersionResource{Group: "cis.f5.com", Version: "v1", Resource: "transportservers"}
	skipperRouteGroups = schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "routegroups"}
	glooProxies        = schema.GroupVersionResource{Group: "gloo.solo.io", Version: "v1", Resource: "proxies"}
	glooVirtualSvcs    = schema.GroupVersionResource{Group: "gateway.solo.io", Version: "v1", Resource: "virtualservices"}
)

// TestControllerSourcesEndToEnd: an Ambassador Host (at the load balancer
// of the Service its external-dns.ambassador-service annotation names, in
// another namespace), an F5 VirtualServer with a host alias and an F5
// TransportServer (at the address BIG-IP wrote in their status) and a
// Skipper RouteGroup (at the load balancer in its status) and a Gloo Proxy
// (at its Service's load balancer, with its VirtualService's ttl), created
// in a real kube-apiserver, become records in BIND, each with its TXT
// ownership record; a deleted Host takes its records with it and leaves
// the others.
func TestControllerSourcesEndToEnd(t *testing.T) {
	const zone = "controllers.test"
	cluster := kube.StartT(t, controllerCRDs...)
	ns := bind.StartT(t, zone)
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig,
		"--source=ambassador-host", "--source=f5-virtualserver", "--source=f5-transportserver",
		"--source=skipper-routegroup", "--skipper-routegroup-groupversion=zalando.org/v1",
		"--source=gloo-proxy", "--gloo-namespace=gloo-system",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"},
		rfc2136Flags(ns, zone, "ctl")...)
	startProcess(t, "zonestream", args...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	// A LoadBalancer Service in a namespace of its own: Ambassador's, and
	// Gloo's gateway-proxy.
	loadBalancer := func(ns, name, ip string) {
		t.Helper()
		if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc, err := cluster.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		if _, err := cluster.Client.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	loadBalancer("ambassador", "ambassador", "192.0.2.10")
	loadBalancer("gloo-system", "gateway-proxy", "192.0.2.60")
	create := func(gvr schema.GroupVersionResource, u *unstructured.Unstructured, status map[string]any) {
		t.Helper()
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		got, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if status == nil {
			return
		}
		got.Object["status"] = status
		if _, err := dyn.Resource(gvr).Namespace(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	object := func(apiVersion, kind, name string, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name}, "spec": spec}}
		u.SetAnnotations(annotations)
		return u
	}
	create(ambassadorHosts, object("getambassador.io/v2", "Host", "www",
		map[string]string{"external-dns.ambassador-service": "ambassador/ambassador"},
		map[string]any{"hostname": "www." + zone}), nil)
	create(f5VirtualServers, object("cis.f5.com/v1", "VirtualServer", "shop", nil,
		map[string]any{"host": "shop." + zone, "hostAliases": []any{"store." + zone}, "virtualServerAddress": "192.0.2.20",
			"pools": []any{map[string]any{"path": "/", "service": "shop", "servicePort": int64(80)}}}),
		map[string]any{"vsAddress": "192.0.2.20", "status": "OK"})
	create(f5TransportServers, object("cis.f5.com/v1", "TransportServer", "db", nil,
		map[string]any{"host": "db." + zone, "ipamLabel": "prod", "virtualServerPort": int64(5432), "mode": "standard",
			"pool": map[string]any{"service": "postgres", "servicePort": int64(5432)}}),
		map[string]any{"vsAddress": "192.0.2.30", "status": "OK"})
	create(skipperRouteGroups, object("zalando.org/v1", "RouteGroup", "api", nil,
		map[string]any{"hosts": []any{"api." + zone}, "backends": []any{map[string]any{"name": "shunt", "type": "shunt"}}}),
		map[string]any{"loadBalancer": map[string]any{"routegroup": []any{map[string]any{"ip": "192.0.2.40"}}}})
	vs := object("gateway.solo.io/v1", "VirtualService", "shop", map[string]string{"external-dns.alpha.kubernetes.io/ttl": "60"},
		map[string]any{"virtualHost": map[string]any{"domains": []any{"gloo." + zone}}})
	create(glooVirtualSvcs, vs, nil)
	px := object("gloo.solo.io/v1", "Proxy", "gateway-proxy", nil, map[string]any{"listeners": []any{map[string]any{
		"name": "listener-::-8080", "bindAddress": "::", "bindPort": int64(8080),
		"httpListener": map[string]any{"virtualHosts": []any{map[string]any{"name": "default-shop", "domains": []any{"gloo." + zone},
			"metadataStatic": map[string]any{"sources": []any{map[string]any{"resourceKind": "*v1.VirtualService",
				"resourceRef": map[string]any{"name": "shop", "namespace": "default"}}}}}}}}}})
	px.SetNamespace("gloo-system")
	create(glooProxies, px, nil)

	txt := func(name, resource string) string {
		return "a-" + name + " TXT heritage=external-dns,external-dns/owner=ctl,external-dns/resource=" + resource
	}
	base := []string{"@ NS ns." + zone, "ns A 127.0.0.1"}
	want := append(slices.Clone(base),
		"www A 192.0.2.10", txt("www", "ambassador-host/default/www"),
		"shop A 192.0.2.20", txt("shop", "f5-virtualserver/default/shop"),
		"store A 192.0.2.20", txt("store", "f5-virtualserver/default/shop"),
		"db A 192.0.2.30", txt("db", "f5-transportserver/default/db"),
		"api A 192.0.2.40", txt("api", "skipper-routegroup/default/api"),
		"gloo A 192.0.2.60", txt("gloo", "gloo-proxy/gloo-system/gateway-proxy"))
	waitZone(t, ns, zone, sorted(want), time.Minute)
	// The VirtualService's ttl reached BIND with the Proxy's name.
	if rrs, err := ns.Query("gloo."+zone, dns.TypeA); err != nil || len(rrs) != 1 || rrs[0].Header().Ttl != 60 {
		t.Errorf("gloo.%s A: %v %v, want one record with TTL 60", zone, rrs, err)
	}

	if err := dyn.Resource(ambassadorHosts).Namespace("default").Delete(ctx, "www", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(r string) bool { return strings.HasPrefix(r, "www ") || strings.HasPrefix(r, "a-www ") })
	waitZone(t, ns, zone, sorted(want), time.Minute)
}
