package systemtest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

var dnsEndpoints = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// statusWorld is a running all-in-one with a cluster and BIND, and the
// helpers to read what it wrote back on the objects.
type statusWorld struct {
	t    *testing.T
	ctx  context.Context
	kube *kube.Cluster
	dyn  dynamic.Interface
	ns   *bind.Server
	zone string
}

// TestStatusBackOnKubernetes runs the all-in-one against a real
// kube-apiserver and BIND and reads, on the objects, what became of their
// records: the DNSEndpoint Ready condition and Events on a Service.
func TestStatusBackOnKubernetes(t *testing.T) {
	const zone = "status.test"
	cluster := kube.StartT(t, "../deploy/crds")
	ns := bind.StartT(t, zone)
	for _, rr := range []string{"taken." + zone + ". 300 IN A 192.0.2.99",
		"a-taken." + zone + `. 300 IN TXT "heritage=external-dns,external-dns/owner=someone-else,external-dns/resource=service/default/other"`} {
		if err := walkthrough.Plant(ns, zone, rr); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--source=crd", "--source-priority=crd,service",
		"--events-emit=RecordReady,RecordDeleted,RecordError", "--events-emit=RecordRejected",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"},
		rfc2136Flags(ns, zone, "e2e")...)
	startProcess(t, "zonestream", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &statusWorld{t: t, ctx: ctx, kube: cluster, dyn: dyn, ns: ns, zone: zone}

	// A DNSEndpoint is Ready once its record answers in BIND, not before.
	gen := w.createEndpoint("web", "192.0.2.10")
	w.waitCondition("web", "True", "Programmed", "", func() error {
		return w.answers("web", "192.0.2.10")
	})
	if c := w.condition("web"); c.ObservedGeneration != gen {
		t.Errorf("web's Ready condition is of generation %d, want %d", c.ObservedGeneration, gen)
	}

	// A name another owner holds: refused, and said so.
	taken := w.createEndpointAt("taken", "taken", "192.0.2.11")
	w.waitCondition("taken", "False", "NotOwned", `owned by "someone-else"`, nil)
	w.waitEvent(endpointRef(taken), "Warning", "RecordRejected", "NotOwned", `owned by "someone-else"`)
	if err := w.answers("taken", "192.0.2.99"); err != nil {
		t.Fatalf("the other owner's record changed: %v", err)
	}

	// A Service hears when its record is published, and when it loses
	// the name to a DNSEndpoint (crd outranks service).
	svc := w.createService("svc", "192.0.2.20")
	waitUntil(t, "BIND answers svc", time.Minute, func() error { return w.answers("svc", "192.0.2.20") })
	w.waitEvent(svc, "Normal", "RecordReady", "Published", "svc."+zone+" published")
	w.createEndpointAt("rival", "svc", "192.0.2.21")
	w.waitCondition("rival", "True", "Programmed", "", func() error { return w.answers("svc", "192.0.2.21") })
	w.waitEvent(svc, "Warning", "RecordRejected", "Outranked", `svc.`+zone+` rejected (Outranked)`)

	// The provider fails: the failures are counted on the object.
	if err := ns.Halt(); err != nil {
		t.Fatal(err)
	}
	down := w.createEndpointAt("down", "down", "192.0.2.30")
	failedTimes := regexp.MustCompile(`failed (\d+) times in a row`)
	waitUntil(t, "down's Ready condition counts repeated failures", 2*time.Minute, func() error {
		c := w.condition("down")
		if c == nil || c.Reason != "Failed" {
			return fmt.Errorf("condition %+v", c)
		}
		m := failedTimes.FindStringSubmatch(c.Message)
		if n, _ := strconv.Atoi(safeIndex(m, 1)); n < 2 {
			return fmt.Errorf("condition %+v: no count of 2 or more", c)
		}
		return nil
	})
	w.waitEvent(endpointRef(down), "Warning", "RecordError", "FailedSync", "down."+zone+" failed once in a row")
	if err := ns.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	w.waitCondition("down", "True", "Programmed", "", func() error { return w.answers("down", "192.0.2.30") })

	// A DNSEndpoint deleted: its record goes, and it is told.
	web := w.get("web")
	if err := dyn.Resource(dnsEndpoints).Namespace("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "web gone from BIND", time.Minute, func() error {
		if got := w.query("web"); len(got) > 0 {
			return fmt.Errorf("still answers %v", got)
		}
		return nil
	})
	w.waitEvent(endpointRef(web), "Normal", "RecordDeleted", "Deleted", "web."+zone+" deleted")
}

func safeIndex(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func endpointRef(u *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "DNSEndpoint", Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()}
}

func (w *statusWorld) createEndpoint(name, ip string) int64 {
	return w.createEndpointAt(name, name, ip).GetGeneration()
}

func (w *statusWorld) createEndpointAt(name, label, ip string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": label + "." + w.zone, "recordType": "A", "targets": []any{ip}}}},
	}}
	out, err := w.dyn.Resource(dnsEndpoints).Namespace("default").Create(w.ctx, u, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *statusWorld) createService(name, ip string) *corev1.ObjectReference {
	w.t.Helper()
	wk := walkthrough.Walk{Ctx: w.ctx, Kube: w.kube.Client, DNS: w.ns, Zone: w.zone}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": name + "." + w.zone}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
	}
	created, err := wk.Kube.CoreV1().Services("default").Create(w.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if _, err := wk.Kube.CoreV1().Services("default").UpdateStatus(w.ctx, created, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	return &corev1.ObjectReference{Kind: "Service", Namespace: "default", Name: name, UID: created.UID}
}

func (w *statusWorld) get(name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.dyn.Resource(dnsEndpoints).Namespace("default").Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// condition is the DNSEndpoint's Ready condition, nil when it has none.
func (w *statusWorld) condition(name string) *metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(w.get(name).Object, "status", "conditions")
	var conds []metav1.Condition
	for _, r := range raw {
		var c metav1.Condition
		if m, ok := r.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conds = append(conds, c)
		}
	}
	return apimeta.FindStatusCondition(conds, "Ready")
}

// waitCondition waits for the DNSEndpoint's Ready condition; then, at
// once, check (if any) must hold: a Ready condition ahead of DNS fails.
func (w *statusWorld) waitCondition(name, status, reason, message string, check func() error) {
	w.t.Helper()
	waitUntil(w.t, name+" Ready="+status+" "+reason, 2*time.Minute, func() error {
		c := w.condition(name)
		if c == nil || string(c.Status) != status || c.Reason != reason || !strings.Contains(c.Message, message) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if check != nil {
		if err := check(); err != nil {
			w.t.Fatalf("%s is Ready=%s but: %v", name, status, err)
		}
	}
}

// waitEvent waits for an events.k8s.io Event about obj.
func (w *statusWorld) waitEvent(obj *corev1.ObjectReference, typ, reason, action, note string) {
	w.t.Helper()
	waitUntil(w.t, fmt.Sprintf("%s event %s on %s/%s", typ, reason, obj.Kind, obj.Name), 2*time.Minute, func() error {
		list, err := w.kube.Client.EventsV1().Events(obj.Namespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind != obj.Kind || e.Regarding.Name != obj.Name {
				continue
			}
			seen = append(seen, e.Type+" "+e.Reason+" "+e.Action+": "+e.Note)
			if e.Regarding.UID == obj.UID && e.Type == typ && e.Reason == reason && e.Action == action &&
				strings.Contains(e.Note, note) && e.ReportingController == "zonestream.io/collector" {
				return nil
			}
		}
		return fmt.Errorf("events: %q", seen)
	})
}

func (w *statusWorld) query(label string) []string {
	rrs, err := w.ns.Query(label+"."+w.zone, dns.TypeA)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

func (w *statusWorld) answers(label, ip string) error {
	if got := w.query(label); !slices.Equal(got, []string{ip}) {
		return errors.New(label + " answers " + strings.Join(got, ",") + ", want " + ip)
	}
	return nil
}
