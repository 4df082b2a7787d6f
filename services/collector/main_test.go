package collector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// crdDir holds the CRDs zonestream ships (the DNSEndpoint CRD).
const crdDir = "../../deploy/crds"

// One kube-apiserver and one JetStream server for the whole package.
var (
	cluster *kube.Cluster
	js      jetstream.JetStream
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	// The DNSEndpoint CRD is installed from deploy/crds, as a user would.
	if cluster, err = kube.Start(context.Background(), crdDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Stop()
	dir, err := os.MkdirTemp("", "zs-collector-nats-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, err := natsenv.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	if js, err = jetstream.New(nc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

const waitFor = 20 * time.Second

var seq atomic.Int64

// newNamespace creates a namespace of its own for one test or case; its
// name is also used as the cluster name, so that subjects never collide.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d", seq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// running is a collector running in the background.
type running struct {
	c    *collector.Collector
	stop func()
}

// startCollector runs a collector with cfg (sources "service", one worker
// so that events are processed in order) and waits until it is ready.
func startCollector(t *testing.T, cfg collector.Config) *running {
	t.Helper()
	cfg.RESTConfig = cluster.Config
	if len(cfg.Sources) == 0 {
		cfg.Sources = []string{"service"}
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	c, err := collector.New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return runCollector(t, c)
}

// startAndExpect starts a collector with cfg, after edit (may be nil),
// and checks what it publishes for subj: want(arg), or, for a nil want,
// nothing. Once the collector is ready its first pass has computed every
// object from synced caches, so "nothing published" needs no barrier.
func startAndExpect[A any](t *testing.T, cfg collector.Config, edit func(*collector.Config), subj string, want func(A) []events.Endpoint, arg A) {
	t.Helper()
	if edit != nil {
		edit(&cfg)
	}
	startCollector(t, cfg)
	if want == nil {
		if s, ok := lastState(t, subj); ok {
			t.Fatalf("published %v, want nothing", render(s.Endpoints))
		}
		return
	}
	waitState(t, subj, want(arg))
}

func runCollector(t *testing.T, c *collector.Collector) *running {
	t.Helper()
	return runCollectorOn(t, c, js)
}

// runCollectorOn is runCollector on a bus of the test's own.
func runCollectorOn(t *testing.T, c *collector.Collector, js jetstream.JetStream) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, js) }()
	var stopped atomic.Bool
	stop := func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v, want context.Canceled", err)
			}
		case <-time.After(waitFor):
			t.Errorf("Run did not return within %v of cancel", waitFor)
		}
		if c.Ready() == nil {
			t.Errorf("Ready() is nil after Run returned")
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(waitFor)
	for c.Ready() != nil {
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not ready after %v: %v", waitFor, c.Ready())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &running{c: c, stop: stop}
}

func subject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, "service", ns, name)
}

// lastState returns the last state published on subject, if any.
func lastState(t *testing.T, subj string) (*events.SourceState, bool) {
	t.Helper()
	st, err := js.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(t.Context(), subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var s events.SourceState
	if err := events.Unmarshal(msg.Header, msg.Data, &s); err != nil {
		t.Fatal(err)
	}
	if h := msg.Header.Get(events.HeaderHash); h != events.Hash(msg.Data) {
		t.Fatalf("%s: hash header %s does not match payload", subj, h)
	}
	return &s, true
}

// count is how many messages the stream holds on subj.
func count(t *testing.T, subj string) uint64 {
	t.Helper()
	return subjectCounts(t, subj)[subj]
}

// subjectCounts is how many messages the sources stream holds on each
// subject matching filter.
func subjectCounts(tb testing.TB, filter string) map[string]uint64 {
	tb.Helper()
	st, err := js.Stream(context.Background(), events.StreamSources)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(filter))
	if err != nil {
		tb.Fatal(err)
	}
	return info.State.Subjects
}

func render(eps []events.Endpoint) string {
	events.SortEndpoints(eps)
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintf(&b, "%s %s ttl=%d %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets)
	}
	return b.String()
}

// waitState waits until the last state on subj has exactly want; an empty
// want waits for a tombstone (which must exist).
func waitState(t *testing.T, subj string, want []events.Endpoint) *events.SourceState {
	t.Helper()
	w := render(want)
	deadline := time.Now().Add(waitFor)
	for {
		s, ok := lastState(t, subj)
		if ok && render(s.Endpoints) == w {
			return s
		}
		if time.Now().After(deadline) {
			got := "<nothing published>"
			if ok {
				got = render(s.Endpoints)
			}
			t.Fatalf("%s: last state\n%s\nwant\n%s", subj, got, w)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var barrierSeq atomic.Int64

// barrier creates a Service that publishes and waits for its state: with
// one worker, whatever the collector was sent before has been processed.
func barrier(t *testing.T, clusterName, ns string, adapt ...func(*corev1.Service)) {
	t.Helper()
	name := fmt.Sprintf("zz-barrier-%d", barrierSeq.Add(1))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/hostname": name + ".barrier.test",
			"external-dns.alpha.kubernetes.io/target":   "192.0.2.254",
		}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	for _, f := range adapt {
		if f != nil {
			f(svc)
		}
	}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, subject(clusterName, ns, name), []events.Endpoint{events.NewEndpoint(name+".barrier.test", "A", 0, "192.0.2.254")})
}

// createService creates svc in ns and, if lb is given, sets its load
// balancer status as a cloud controller would.
func createService(t *testing.T, ns string, svc *corev1.Service, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	t.Helper()
	svc = svc.DeepCopy()
	svc.Namespace = ns
	if len(svc.Spec.Ports) == 0 && svc.Spec.Type != corev1.ServiceTypeExternalName {
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	}
	got, err := cluster.Client.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb) > 0 {
		got = setLoadBalancer(t, got, lb...)
	}
	return got
}

func setLoadBalancer(t *testing.T, svc *corev1.Service, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	t.Helper()
	svc = svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = lb
	got, err := cluster.Client.CoreV1().Services(svc.Namespace).UpdateStatus(t.Context(), svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
