package systemtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

var dnsRecords = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsrecords"}

// TestCRDRegistryTakeover: a zone ExternalDNS owns with --registry=crd
// --txt-owner-id=x (www A 10.0.0.1 in BIND, and its DNSRecord, Programmed,
// as ExternalDNS writes it) is taken over by the all-in-one run with the
// same flags: www is updated, a new name gets ExternalDNS' DNSRecord, a
// deleted Service takes its record and DNSRecord with it, no TXT record is
// ever written, and a record nobody owns (no DNSRecord) is never touched
// though a Service wants it, nor is one another owner (y) keeps in its
// DNSRecord. The Services hear of it as with TXT
// ownership: the status writer reads the same ownership the planner does.
func TestCRDRegistryTakeover(t *testing.T) {
	const zone, owner, registryNS = "takeover.crd", "x", "external-dns"
	// ExternalDNS' object names (recordObjectName), from python3 hashlib.
	const wwwObject, newObject, theirsObject = "www-takeover-crd-7fcc2d66", "new-takeover-crd-1cf87d3c", "theirs-takeover-crd-733b4602"
	cluster := kube.StartT(t, "../services/applier/crdregistry/testdata")
	ns := bind.StartT(t, zone)
	for _, rr := range []string{"www." + zone + ". 300 IN A 10.0.0.1", "other." + zone + ". 300 IN A 10.0.0.9",
		"theirs." + zone + ". 300 IN A 10.0.0.8"} {
		if err := walkthrough.Plant(ns, zone, rr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: registryNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	objs := dyn.Resource(dnsRecords).Namespace(registryNS)
	externalDNSWrote(ctx, t, objs, wwwObject, owner, "www."+zone, "10.0.0.1", "service/default/www")
	// Another ExternalDNS (owner y) keeps theirs in the same namespace.
	externalDNSWrote(ctx, t, objs, theirsObject, "y", "theirs."+zone, "10.0.0.8", "service/default/theirs")

	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--events-emit=RecordReady,RecordRejected",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"},
		rfc2136Flags(ns, zone, owner)...)
	startProcess(t, "zonestream", append(args, "--registry=crd", "--crd-registry-namespace="+registryNS)...)

	kc := cluster.Client
	w := &statusWorld{t: t, ctx: ctx, kube: cluster, dyn: dyn, ns: ns, zone: zone}
	other := w.createService("other", "10.0.0.10")   // nobody's in BIND: never ours
	theirs := w.createService("theirs", "10.0.0.11") // y's: never ours
	w.createService("www", "10.0.0.2")
	waitForA(t, ns, "www."+zone, "10.0.0.2")
	waitForObject(ctx, t, objs, wwwObject, func(u *unstructured.Unstructured) error {
		return endpointIs(u, "www."+zone, []string{"10.0.0.2"}, "service/default/www")
	})

	newSvc := w.createService("new", "10.0.0.3")
	waitForA(t, ns, "new."+zone, "10.0.0.3")
	waitForObject(ctx, t, objs, newObject, func(u *unstructured.Unstructured) error {
		if l := u.GetLabels()["externaldns.k8s.io/owner"]; l != owner {
			return fmt.Errorf("owner label %q", l)
		}
		return endpointIs(u, "new."+zone, []string{"10.0.0.3"}, "service/default/new")
	})

	w.waitEvent(newSvc, "Normal", "RecordReady", "Published", "new."+zone+" published")
	// other was seen and left alone: not ours, and the Service is told.
	w.waitEvent(other, "Warning", "RecordRejected", "NotOwned", "other."+zone)
	w.waitEvent(theirs, "Warning", "RecordRejected", "NotOwned", `owned by "y"`)

	if err := kc.CoreV1().Services("default").Delete(ctx, "new", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForA(t, ns, "new."+zone, "")
	waitForObject(ctx, t, objs, newObject, nil)
	if err := kc.CoreV1().Services("default").Delete(ctx, "www", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForA(t, ns, "www."+zone, "")
	waitForObject(ctx, t, objs, wwwObject, nil)

	// Exactly what is wanted: other and theirs as they were, no TXT record, ever.
	want := []string{"@ NS ns." + zone, "ns A 127.0.0.1", "other A 10.0.0.9", "theirs A 10.0.0.8"}
	if got := zoneContents(t, ns, zone); !slices.Equal(got, sorted(want)) {
		t.Fatalf("zone holds %v, want %v", got, sorted(want))
	}
	if l, err := objs.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 || l.Items[0].GetName() != theirsObject {
		t.Fatalf("DNSRecords left: %v %v, want y's alone", l, err)
	}
}

// externalDNSWrote creates the DNSRecord ExternalDNS v0.23 leaves for an A
// record it applied: Ready=True, Programmed.
func externalDNSWrote(ctx context.Context, t *testing.T, objs dynamic.ResourceInterface, name, owner, host, ip, resource string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSRecord",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"externaldns.k8s.io/owner": owner}},
		"spec": map[string]any{"endpoint": map[string]any{"dnsName": host, "recordType": "A", "targets": []any{ip},
			"labels": map[string]any{"owner": owner, "resource": resource}}},
	}}
	created, err := objs.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True",
		"reason": "Programmed", "message": "Endpoint applied to the DNS provider", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := objs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitForA waits until BIND's A record at name is ip ("" for none).
func waitForA(t *testing.T, s *bind.Server, name, ip string) {
	t.Helper()
	var want []string
	if ip != "" {
		want = []string{ip}
	}
	waitUntil(t, name+" A "+ip, 30*time.Second, func() error {
		rrs, err := s.Query(name, dns.TypeA)
		if err != nil {
			return err
		}
		var got []string
		for _, rr := range rrs {
			if a, ok := rr.(*dns.A); ok && a.Header().Name == dns.Fqdn(name) {
				got = append(got, a.A.String())
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("BIND answers %v", got)
		}
		return nil
	})
}

// waitForObject waits until the DNSRecord name passes check, Programmed;
// with a nil check, until it is gone.
func waitForObject(ctx context.Context, t *testing.T, objs dynamic.ResourceInterface, name string, check func(*unstructured.Unstructured) error) {
	t.Helper()
	waitUntil(t, "DNSRecord "+name, 30*time.Second, func() error {
		u, err := objs.Get(ctx, name, metav1.GetOptions{})
		switch {
		case check == nil && apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case check == nil:
			return fmt.Errorf("still there")
		}
		if err := check(u); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" && m["reason"] == "Programmed" {
				return nil
			}
		}
		return fmt.Errorf("not Ready/Programmed: %v", conds)
	})
}

// endpointIs checks a DNSRecord's spec.endpoint as ExternalDNS writes it.
func endpointIs(u *unstructured.Unstructured, host string, targets []string, resource string) error {
	ep, _, _ := unstructured.NestedMap(u.Object, "spec", "endpoint")
	got, _, _ := unstructured.NestedStringSlice(ep, "targets")
	labels, _, _ := unstructured.NestedStringMap(ep, "labels")
	if ep["dnsName"] != host || ep["recordType"] != "A" || !slices.Equal(got, targets) ||
		labels["owner"] != u.GetLabels()["externaldns.k8s.io/owner"] || labels["resource"] != resource {
		return fmt.Errorf("spec.endpoint is %v", ep)
	}
	return nil
}

// TestCRDRegistryProviderFailureEndToEnd: the all-in-one with
// --registry=crd while BIND is down: the new name's DNSRecord is left
// Failed (Ready=False), not owned, and nothing is in DNS; once BIND is
// back, the record is created and its DNSRecord Programmed.
func TestCRDRegistryProviderFailureEndToEnd(t *testing.T) {
	const zone, owner = "failing.crd", "x"
	const downObject = "down-failing-crd-de3e8fee" // ExternalDNS' name (python3 hashlib)
	cluster := kube.StartT(t, "../services/applier/crdregistry/testdata")
	ns := bind.StartT(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	objs := dyn.Resource(dnsRecords).Namespace("default")
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"},
		rfc2136Flags(ns, zone, owner)...)
	startProcess(t, "zonestream", append(args, "--registry=crd", "--crd-registry-namespace=default")...)

	// The pipeline at work first: the zone listed, a first name applied.
	w := &statusWorld{t: t, ctx: ctx, kube: cluster, dyn: dyn, ns: ns, zone: zone}
	w.createService("up", "10.0.0.3")
	waitForA(t, ns, "up."+zone, "10.0.0.3")
	if err := ns.Halt(); err != nil {
		t.Fatal(err)
	}
	w.createService("down", "10.0.0.4")
	waitUntil(t, "down's DNSRecord Failed", 2*time.Minute, func() error {
		u, err := objs.Get(ctx, downObject, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Ready" && m["status"] == "False" && m["reason"] == "Failed" {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", conds)
	})
	if err := ns.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitForA(t, ns, "down."+zone, "10.0.0.4")
	waitForObject(ctx, t, objs, downObject, func(u *unstructured.Unstructured) error {
		return endpointIs(u, "down."+zone, []string{"10.0.0.4"}, "service/default/down")
	})
	if got := zoneContents(t, ns, zone); !slices.Equal(got, sorted([]string{"@ NS ns." + zone, "ns A 127.0.0.1", "up A 10.0.0.3", "down A 10.0.0.4"})) {
		t.Fatalf("zone holds %v", got)
	}
}
