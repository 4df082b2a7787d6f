package systemtest

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// The CRDs of other projects the sources' own tests install (each
// project's real definition, see each testdata's header).
const sourceCRDs = "../services/collector/source/"

// crdObject is one custom object of a source, created in the real
// apiserver, and the record it must give in BIND.
type crdObject struct {
	source string
	gvr    schema.GroupVersionResource
	obj    *unstructured.Unstructured
	status map[string]any // written through the status subresource; nil: none
	// key is the object's name in the ownership records' resource label
	// (empty: its name).
	key   string
	name  string // the DNS name
	qtype uint16
	want  string // the record's data
}

// TestSourcesEndToEnd runs the all-in-one binary with the sources of
// other projects' resources (OpenShift Routes, Traefik IngressRoutes, Contour HTTPProxies, Kong
// TCPIngresses, and any resource through the unstructured source) against a real
// kube-apiserver holding those projects' CRDs, and real BIND: each object
// becomes its record in BIND, its RecordReady Event lands on it, and the
// record goes with the object.
func TestSourcesEndToEnd(t *testing.T) {
	const zone = "sources.test"
	objects := []crdObject{
		{source: "openshift-route", gvr: schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": map[string]any{"name": "shop"},
				"spec": map[string]any{"host": "shop." + zone, "to": map[string]any{"kind": "Service", "name": "shop"}}}},
			status: map[string]any{"ingress": []any{map[string]any{"host": "shop." + zone, "routerName": "default",
				"routerCanonicalHostname": "router-default.apps.example.net",
				"conditions":              []any{map[string]any{"type": "Admitted", "status": "True"}}}}},
			name: "shop." + zone, qtype: dns.TypeCNAME, want: "router-default.apps.example.net."},
		{source: "traefik-proxy", gvr: schema.GroupVersionResource{Group: "traefik.io", Version: "v1alpha1", Resource: "ingressroutes"},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute",
				"metadata": map[string]any{"name": "web", "annotations": map[string]any{"external-dns.alpha.kubernetes.io/target": "192.0.2.10"}},
				"spec": map[string]any{"routes": []any{map[string]any{"match": "Host(`web." + zone + "`) && PathPrefix(`/`)",
					"services": []any{map[string]any{"name": "web", "port": int64(80)}}}}}}},
			key: "ingressroutes.traefik.io/web", name: "web." + zone, qtype: dns.TypeA, want: "192.0.2.10"},
		{source: "contour-httpproxy", gvr: schema.GroupVersionResource{Group: "projectcontour.io", Version: "v1", Resource: "httpproxies"},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "projectcontour.io/v1", "kind": "HTTPProxy", "metadata": map[string]any{"name": "api"},
				"spec": map[string]any{"virtualhost": map[string]any{"fqdn": "api." + zone},
					"routes": []any{map[string]any{"services": []any{map[string]any{"name": "api", "port": int64(80)}}}}}}},
			status: map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.20"}}}},
			name:   "api." + zone, qtype: dns.TypeA, want: "192.0.2.20"},
		{source: "kong-tcpingress", gvr: schema.GroupVersionResource{Group: "configuration.konghq.com", Version: "v1beta1", Resource: "tcpingresses"},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "configuration.konghq.com/v1beta1", "kind": "TCPIngress", "metadata": map[string]any{"name": "db"},
				"spec": map[string]any{"rules": []any{map[string]any{"host": "db." + zone, "port": int64(9000),
					"backend": map[string]any{"serviceName": "db", "servicePort": int64(5432)}}}}}},
			status: map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "kong-proxy.elb.example.net"}}}},
			name:   "db." + zone, qtype: dns.TypeCNAME, want: "kong-proxy.elb.example.net."},
		// Any resource, here KubeVirt's (a test CRD), by its annotations.
		{source: "unstructured", gvr: schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"},
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
				"metadata": map[string]any{"name": "vm", "annotations": map[string]any{
					"external-dns.alpha.kubernetes.io/hostname": "vm." + zone, "external-dns.alpha.kubernetes.io/target": "192.0.2.30"}}}},
			key: "virtualmachineinstances.kubevirt.io/vm", name: "vm." + zone, qtype: dns.TypeA, want: "192.0.2.30"},
	}
	cluster := kube.StartT(t, sourceCRDs+"openshift/testdata", sourceCRDs+"traefik/testdata", sourceCRDs+"contour/testdata",
		sourceCRDs+"kong/testdata", sourceCRDs+"unstructured/testdata")
	ns := bind.StartT(t, zone)
	args := []string{"--kubeconfig=" + cluster.Kubeconfig,
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s",
		// Every record of the zone goes at the end: not a wipe to guard against.
		"--max-deletes=0", "--max-deletes-percent=0", "--events-emit=RecordReady"}
	for _, o := range objects {
		args = append(args, "--source="+o.source)
	}
	args = append(args, "--unstructured-resource=virtualmachineinstances.v1.kubevirt.io")
	startProcess(t, "zonestream", append(args, rfc2136Flags(ns, zone, "srcs")...)...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, o := range objects {
		res := dyn.Resource(o.gvr).Namespace("default")
		got, err := res.Create(ctx, o.obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", o.source, err)
		}
		uids[o.source] = got.GetUID()
		if o.status != nil {
			got.Object["status"] = o.status
			if _, err := res.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("%s: status: %v", o.source, err)
			}
		}
	}
	for _, o := range objects {
		key := cmp.Or(o.key, o.obj.GetName())
		waitForRecords(t, ns, o.name, o.qtype, []string{o.want})
		waitForRecords(t, ns, strings.ToLower(dns.TypeToString[o.qtype])+"-"+o.name, dns.TypeTXT,
			[]string{"heritage=external-dns,external-dns/owner=srcs,external-dns/resource=" + o.source + "/default/" + key})
	}
	// --events-emit: the RecordReady Event lands on the object itself, of
	// its own kind (a traefik-proxy key's name carries the kind).
	for _, o := range objects {
		waitUntil(t, o.source+" RecordReady event", time.Minute, func() error {
			list, err := cluster.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			var seen []string
			for _, e := range list.Items {
				seen = append(seen, e.Regarding.Kind+"/"+e.Regarding.Name+" "+e.Reason)
				if e.Reason == "RecordReady" && e.Regarding.Kind == o.obj.GetKind() && e.Regarding.Name == o.obj.GetName() &&
					e.Regarding.UID == uids[o.source] && strings.Contains(e.Note, o.name) {
					return nil
				}
			}
			return fmt.Errorf("events: %q", seen)
		})
	}
	for _, o := range objects {
		if err := dyn.Resource(o.gvr).Namespace("default").Delete(ctx, o.obj.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objects {
		waitForRecords(t, ns, o.name, o.qtype, nil)
	}
}
