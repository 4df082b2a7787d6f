package collector_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/kubestatus"
)

// TestReadyConditionWritesArePaced: a DNSEndpoint whose names are
// published one by one, 20 in 400 ms, gets its Ready condition written
// once, kubestatus.ConditionDelay after the first, not once per name, with
// what holds last.
func TestReadyConditionWritesArePaced(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("web", collectortest.Entry("web."+ns+".example.org", "A", "192.0.2.1")))
	obj := events.ObjectRef{Cluster: ns, Source: "crd", Namespace: ns, Name: "web"}

	const names = 20
	var mu sync.Mutex
	published := 0
	outcomes := func(events.ObjectRef) map[string]kubestatus.Outcome {
		mu.Lock()
		defer mu.Unlock()
		m := map[string]kubestatus.Outcome{}
		for i := range names {
			o := kubestatus.Outcome{State: kubestatus.Pending, Reason: kubestatus.ReasonPending, Detail: "not yet"}
			if i < published {
				o = kubestatus.Outcome{State: kubestatus.Published, Reason: kubestatus.ReasonProgrammed}
			}
			m[fmt.Sprintf("n%d.%s.example.org", i, ns)] = o
		}
		return m
	}
	kube := runKube(t, collectortest.Cluster.Config, outcomes)

	before := counterTotal(t, "zonestream_collector_kube_conditions_written_total")
	for i := 1; i <= names; i++ {
		mu.Lock()
		published = i
		mu.Unlock()
		kube.Condition(obj)
		time.Sleep(20 * time.Millisecond)
	}
	waitConditionMessage(t, dc, ns, "web", fmt.Sprintf("%d name(s) published", names))
	// One write, a ConditionDelay after the first change; a second if the
	// machine was too slow to make the 20 within it.
	if writes := counterTotal(t, "zonestream_collector_kube_conditions_written_total") - before; writes < 1 || writes > 2 {
		t.Errorf("%v condition writes for %d changes within %v, want 1 (delayed %v)", writes, names, names*20*time.Millisecond, kubestatus.ConditionDelay)
	}
}

// TestReadyConditionReadsTheCacheFirst: the condition writer updates the
// object the collector's cache holds without a GET, and one whose cached
// copy is out of date (the update conflicts) from a GET.
func TestReadyConditionReadsTheCacheFirst(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	created := collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("web", collectortest.Entry("web."+ns+".example.org", "A", "192.0.2.1")))
	obj := events.ObjectRef{Cluster: ns, Source: "crd", Namespace: ns, Name: "web"}

	var mu sync.Mutex
	cached, gets := created, 0
	cfg := rest.CopyConfig(collectortest.Cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/dnsendpoints/web") {
				mu.Lock()
				gets++
				mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	detail := "first"
	outcomes := func(events.ObjectRef) map[string]kubestatus.Outcome {
		mu.Lock()
		defer mu.Unlock()
		return map[string]kubestatus.Outcome{"web." + ns + ".example.org": {State: kubestatus.Pending, Reason: kubestatus.ReasonPending, Detail: detail}}
	}
	kube := runKube(t, cfg, outcomes, kubestatus.WithCache(func(events.ObjectRef) (*unstructured.Unstructured, bool) {
		mu.Lock()
		defer mu.Unlock()
		return cached, true
	}))

	kube.Condition(obj)
	waitConditionMessage(t, dc, ns, "web", "first")
	mu.Lock()
	if gets != 0 {
		t.Errorf("%d GETs of an object the cache held as it is", gets)
	}
	// The cache keeps the copy from before the write: out of date now.
	detail = "second"
	mu.Unlock()
	kube.Condition(obj)
	waitConditionMessage(t, dc, ns, "web", "second")
	mu.Lock()
	defer mu.Unlock()
	if gets != 1 {
		t.Errorf("%d GETs after the cached copy was out of date, want 1", gets)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// waitConditionMessage waits until the Ready condition of the
// DNSEndpoint ns/name has a message holding want.
func waitConditionMessage(t *testing.T, dc dynamic.Interface, ns, name, want string) {
	t.Helper()
	for deadline := time.Now().Add(collectortest.WaitFor); ; time.Sleep(50 * time.Millisecond) {
		u, err := dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		if len(conds) == 1 && strings.Contains(fmt.Sprint(conds[0].(map[string]any)["message"]), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ready condition of %s/%s never said %q: %v", ns, name, want, conds)
		}
	}
}

// runKube runs a condition writer for DNSEndpoints with cfg until the
// test ends.
func runKube(t *testing.T, cfg *rest.Config, outcomes func(events.ObjectRef) map[string]kubestatus.Outcome, opts ...kubestatus.KubeOption) *kubestatus.Kube {
	t.Helper()
	reference := func(o events.ObjectRef) *corev1.ObjectReference {
		return &corev1.ObjectReference{APIVersion: "externaldns.k8s.io/v1alpha1", Kind: "DNSEndpoint", Namespace: o.Namespace, Name: o.Name}
	}
	kube, err := kubestatus.NewKube(cfg, collectortest.Cluster.Client, reference, outcomes, collectortest.Logger(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { kube.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return kube
}
