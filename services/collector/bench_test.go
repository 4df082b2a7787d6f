package collector_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source"
)

// The collector's figures at scale, against the package's real
// kube-apiserver and embedded JetStream (run with -benchtime=1x; see
// hack/bench.sh):
//
//   - BenchmarkCollectorServices: 10k Services.
//   - BenchmarkCollectorGatewayRoutes: 1k Gateways with 10k HTTPRoutes.
//
// Each reports, via b.ReportMetric: the collector's heap growth and the
// process's RSS once every object is published (the process also holds
// the embedded NATS server and the test's clients: RSS is an upper bound),
// the bytes per object of a bare informer cache without and with the
// collector's transform (source.Transform), the collector's heap per
// object, the time from informer sync to every object published, and for
// the Gateways the time for one Gateway's address change to republish all
// its routes.

const (
	benchServices       = 10000
	benchGateways       = 1000
	benchRoutesPerGW    = 10
	benchCreateWorkers  = 16
	benchPublishTimeout = 10 * time.Minute
)

// benchClients are clients without client-side rate limits, to create
// objects quickly.
func benchClients(b *testing.B) (kubernetes.Interface, dynamic.Interface) {
	cfg := rest.CopyConfig(collectortest.Cluster.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return kc, dc
}

// createAll runs create(i) for i in [0, n) on a bounded number of workers
// and stops at the first error.
func createAll(b *testing.B, n int, create func(ctx context.Context, i int) error) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, benchCreateWorkers)
	for range benchCreateWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := create(ctx, i); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// rssBytes is the process's resident set (VmRSS), 0 where /proc is missing.
func rssBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cachedBytes measures the heap an informer's cache takes per object:
// run starts an informer and returns it once synced; its heap growth
// (after GC) is divided by n.
func cachedBytes(b *testing.B, n int, run func(stop <-chan struct{}) cache.SharedIndexInformer) float64 {
	b.Helper()
	before := heapAfterGC()
	stop := make(chan struct{})
	inf := run(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		b.Fatal("informer did not sync")
	}
	if got := len(inf.GetStore().ListKeys()); got < n {
		b.Fatalf("informer holds %d objects, want %d", got, n)
	}
	after := heapAfterGC()
	runtime.KeepAlive(inf)
	close(stop)
	return float64(int64(after)-int64(before)) / float64(n)
}

// collectorRun is a running collector and what was measured while it
// started: syncToPublished is the time from its informers' sync to its
// first pass done (every object published).
type collectorRun struct {
	syncToPublished time.Duration
	heapGrowth      int64
	stop            func()
}

func runBenchCollector(b *testing.B, cfg collector.Config) *collectorRun {
	b.Helper()
	cfg.RESTConfig = collectortest.Cluster.Config
	c, err := collector.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	before := heapAfterGC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, collectortest.JS) }()
	var synced time.Time
	deadline := time.Now().Add(benchPublishTimeout)
	for {
		err := c.Ready()
		if err == nil {
			break
		}
		if synced.IsZero() && strings.HasPrefix(err.Error(), "first publish pass") {
			synced = time.Now()
		}
		select {
		case err := <-done:
			b.Fatalf("collector stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("collector not ready after %v: %v", benchPublishTimeout, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	ready := time.Now()
	if synced.IsZero() {
		synced = ready
	}
	r := &collectorRun{syncToPublished: ready.Sub(synced), heapGrowth: int64(heapAfterGC()) - int64(before)}
	r.stop = func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			b.Errorf("collector: %v", err)
		}
	}
	return r
}

// objectsFilter selects the subjects of every object of one source in one
// namespace.
func objectsFilter(clusterName, src, ns string) string {
	subj := events.SourceSubject(clusterName, src, ns, "x")
	return subj[:len(subj)-1] + "*"
}

// publishedSubjects counts the subjects with a message under filter.
func publishedSubjects(b *testing.B, filter string) int {
	b.Helper()
	return len(collectortest.SubjectCounts(b, filter))
}

var benchServicesOnce sync.Once

// benchServiceNS holds the 10k Services, created once per process.
var benchServiceNS string

// BenchmarkCollectorServices: 10k headless Services (no cluster IP to
// allocate) that look like real ones: labels, a selector, ports, a
// kubectl last-applied annotation, foreign annotations, managedFields.
func BenchmarkCollectorServices(b *testing.B) {
	kc, _ := benchClients(b)
	benchServicesOnce.Do(func() {
		benchServiceNS = fmt.Sprintf("bench-svc-%d", time.Now().UnixNano())
		if _, err := kc.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchServiceNS}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		createAll(b, benchServices, func(ctx context.Context, i int) error {
			name := fmt.Sprintf("svc-%05d", i)
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchServiceNS,
					Labels: map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "bench", "team": "dns"},
					Annotations: map[string]string{
						collectortest.Alpha + "hostname":                   name + ".bench.example.org",
						collectortest.Alpha + "target":                     fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
						collectortest.Alpha + "ttl":                        "300",
						"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat(`{"apiVersion":"v1","kind":"Service"}`, 20),
						"prometheus.io/scrape":                             "true", "prometheus.io/port": "9090",
					}},
				Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app.kubernetes.io/name": name},
					Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "metrics", Port: 9090}}},
			}
			_, err := kc.CoreV1().Services(benchServiceNS).Create(ctx, svc, metav1.CreateOptions{})
			return err
		})
		b.Logf("created %d Services in %v", benchServices, time.Since(start))
	})
	ns := benchServiceNS
	factory := func(opts ...informers.SharedInformerOption) func(stop <-chan struct{}) cache.SharedIndexInformer {
		return func(stop <-chan struct{}) cache.SharedIndexInformer {
			f := informers.NewSharedInformerFactoryWithOptions(kc, 0, append(opts, informers.WithNamespace(ns))...)
			inf := f.Core().V1().Services().Informer()
			f.Start(stop)
			return inf
		}
	}
	raw := cachedBytes(b, benchServices, factory())
	trimmed := cachedBytes(b, benchServices, factory(informers.WithTransform(source.Transform())))

	clusterName := fmt.Sprintf("bench%d", time.Now().UnixNano())
	r := runBenchCollector(b, collector.Config{ClusterName: clusterName, Namespace: ns, Sources: []string{"service"}})
	defer r.stop()
	if got := publishedSubjects(b, objectsFilter(clusterName, "service", ns)); got != benchServices {
		b.Fatalf("%d Services published, want %d", got, benchServices)
	}
	b.ReportMetric(float64(r.heapGrowth)/(1<<20), "collector-heap-MB")
	b.ReportMetric(float64(rssBytes())/(1<<20), "process-RSS-MB")
	b.ReportMetric(raw, "cache-B/obj-raw")
	b.ReportMetric(trimmed, "cache-B/obj-transformed")
	b.ReportMetric(float64(r.heapGrowth)/benchServices, "collector-heap-B/obj")
	b.ReportMetric(r.syncToPublished.Seconds(), "sync-to-published-s")
}

var (
	benchGatewaysOnce sync.Once
	benchGatewayNS    string
)

func benchGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: resource}
}

func gwStatusAddress(ip string) []any {
	return []any{map[string]any{"type": "IPAddress", "value": ip}}
}

// BenchmarkCollectorGatewayRoutes: 1k Gateways (one HTTP listener, one
// address each) with 10 HTTPRoutes each, accepted, with a hostname each.
func BenchmarkCollectorGatewayRoutes(b *testing.B) {
	kc, dc := benchClients(b)
	benchGatewaysOnce.Do(func() {
		collectortest.InstallGatewayAPI(b)
		benchGatewayNS = fmt.Sprintf("bench-gw-%d", time.Now().UnixNano())
		if _, err := kc.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchGatewayNS}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		ns := benchGatewayNS
		start := time.Now()
		gws := dc.Resource(benchGVR("gateways")).Namespace(ns)
		createAll(b, benchGateways, func(ctx context.Context, i int) error {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
				"metadata": map[string]any{"name": fmt.Sprintf("gw-%04d", i), "namespace": ns},
				"spec": map[string]any{"gatewayClassName": "zs", "listeners": []any{map[string]any{
					"name": "http", "protocol": "HTTP", "port": int64(80),
					"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "Same"}}}}},
			}}
			got, err := gws.Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if err := unstructured.SetNestedSlice(got.Object, gwStatusAddress(fmt.Sprintf("10.1.%d.%d", i>>8, i&255)), "status", "addresses"); err != nil {
				return err
			}
			_, err = gws.UpdateStatus(ctx, got, metav1.UpdateOptions{})
			return err
		})
		routes := dc.Resource(benchGVR("httproutes")).Namespace(ns)
		now := time.Now().UTC().Format(time.RFC3339)
		createAll(b, benchGateways*benchRoutesPerGW, func(ctx context.Context, i int) error {
			gw := fmt.Sprintf("gw-%04d", i/benchRoutesPerGW)
			name := fmt.Sprintf("route-%05d", i)
			ref := map[string]any{"name": gw}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
				"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{
					"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat(`{"kind":"HTTPRoute"}`, 20)}},
				"spec": map[string]any{"hostnames": []any{name + ".bench.example.org"}, "parentRefs": []any{ref},
					"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "backend", "port": int64(80)}}}}},
			}}
			got, err := routes.Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			status := []any{map[string]any{"parentRef": ref, "controllerName": "example.org/zs-bench",
				"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "bench", "lastTransitionTime": now}}}}
			if err := unstructured.SetNestedSlice(got.Object, status, "status", "parents"); err != nil {
				return err
			}
			_, err = routes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
			return err
		})
		b.Logf("created %d Gateways and %d HTTPRoutes in %v", benchGateways, benchGateways*benchRoutesPerGW, time.Since(start))
	})
	ns := benchGatewayNS
	nRoutes := benchGateways * benchRoutesPerGW
	routeInformer := func(transform cache.TransformFunc) func(stop <-chan struct{}) cache.SharedIndexInformer {
		return func(stop <-chan struct{}) cache.SharedIndexInformer {
			inf := dynamicinformer.NewFilteredDynamicInformer(dc, benchGVR("httproutes"), ns, 0, cache.Indexers{}, nil).Informer()
			if transform != nil {
				if err := inf.SetTransform(transform); err != nil {
					b.Fatal(err)
				}
			}
			go inf.Run(stop)
			return inf
		}
	}
	raw := cachedBytes(b, nRoutes, routeInformer(nil))
	trimmed := cachedBytes(b, nRoutes, routeInformer(source.Transform()))

	clusterName := fmt.Sprintf("bench%d", time.Now().UnixNano())
	cfg := collector.Config{ClusterName: clusterName, Namespace: ns, Sources: []string{"gateway-httproute"}}
	cfg.Gateway.PollInterval = 100 * time.Millisecond
	r := runBenchCollector(b, cfg)
	defer r.stop()
	if got := publishedSubjects(b, objectsFilter(clusterName, "gateway-httproute", ns)); got != nRoutes {
		b.Fatalf("%d HTTPRoutes published, want %d", got, nRoutes)
	}
	heap := r.heapGrowth
	rss := rssBytes()

	// One Gateway's address changes: time until its routes are republished.
	gws := dc.Resource(benchGVR("gateways")).Namespace(ns)
	g, err := gws.Get(context.Background(), "gw-0000", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(g.Object, gwStatusAddress("192.0.2.200"), "status", "addresses"); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := gws.UpdateStatus(context.Background(), g, metav1.UpdateOptions{}); err != nil {
		b.Fatal(err)
	}
	st, err := collectortest.JS.Stream(context.Background(), events.StreamSources)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchRoutesPerGW {
		subj := events.SourceSubject(clusterName, "gateway-httproute", ns, fmt.Sprintf("route-%05d", i))
		for {
			msg, err := st.GetLastMsgForSubject(context.Background(), subj)
			if err != nil {
				b.Fatal(err)
			}
			var s events.SourceState
			if err := events.Unmarshal(msg.Header, msg.Data, &s); err != nil {
				b.Fatal(err)
			}
			if len(s.Endpoints) > 0 && strings.Contains(fmt.Sprint(s.Endpoints[0].Targets), "192.0.2.200") {
				break
			}
			if time.Since(start) > benchPublishTimeout {
				b.Fatalf("%s not republished after %v", subj, benchPublishTimeout)
			}
			time.Sleep(time.Millisecond)
		}
	}
	republish := time.Since(start)

	b.ReportMetric(float64(heap)/(1<<20), "collector-heap-MB")
	b.ReportMetric(float64(rss)/(1<<20), "process-RSS-MB")
	b.ReportMetric(raw, "cache-B/route-raw")
	b.ReportMetric(trimmed, "cache-B/route-transformed")
	b.ReportMetric(float64(heap)/float64(nRoutes+benchGateways), "collector-heap-B/obj")
	b.ReportMetric(r.syncToPublished.Seconds(), "sync-to-published-s")
	b.ReportMetric(float64(republish.Milliseconds()), "gateway-change-republish-ms")
}
