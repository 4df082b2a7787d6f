package dnsprovider_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/leader"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

const owner = "default"

// world is a real kube-apiserver with the DNSProvider CRDs, an embedded
// JetStream with zonestream's streams, and what the controllers logged.
type world struct {
	cluster *kube.Cluster
	dyn     dynamic.Interface
	js      jetstream.JetStream
	logs    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startWorld(t *testing.T) *world {
	t.Helper()
	cluster := kube.StartT(t, "../../../deploy/crds/dnsprovider.yaml", "../../../deploy/crds/clusterdnsprovider.yaml")
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	w := &world{cluster: cluster, dyn: dyn, js: js, logs: &syncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("the controllers' log:\n" + w.logs.String())
		}
	})
	return w
}

// baseApplier is the applier configuration every declared provider starts
// from: the flags' defaults, listed every interval.
func baseApplier(interval time.Duration) applier.Config {
	var cfg applier.Config
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	cfg.Interval = interval
	cfg.Owner = registry.Settings{OwnerID: owner}
	return cfg
}

// startController runs a controller (one replica) until the test ends;
// stop ends it sooner and returns once it stopped.
func (w *world) startController(t *testing.T, identity string, mutate ...func(*dnsprovider.Config)) (stop func()) {
	t.Helper()
	el := leader.Config{Identity: identity, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond}
	cfg := dnsprovider.Config{Enabled: true, RESTConfig: w.cluster.Config, Applier: baseApplier(time.Second),
		Election: &el, StatusInterval: 200 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	logger := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", identity)
	c, err := dnsprovider.New(cfg, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, w.js) }()
	eventually(t, 30*time.Second, func() bool { return c.Ready() == nil }, func() string { return c.Ready().Error() })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("controller %s: %v", identity, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func (w *world) namespace(t *testing.T, name string) {
	t.Helper()
	_, err := w.cluster.Client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// secret creates or replaces a Secret.
func (w *world) secret(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
	old, err := w.cluster.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		old.Data, old.StringData = nil, data
		_, err = w.cluster.Client.CoreV1().Secrets(ns).Update(ctx, old, metav1.UpdateOptions{})
	} else {
		_, err = w.cluster.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// provider creates a DNSProvider.
func (w *world) provider(t *testing.T, ns, name string, spec map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "zonestream.io/v1alpha1", "kind": "DNSProvider",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
	if _, err := w.dyn.Resource(dnsprovider.DNSProviders).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) deleteProvider(t *testing.T, ns, name string) {
	t.Helper()
	if err := w.dyn.Resource(dnsprovider.DNSProviders).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get reads a DNSProvider; nil when there is none.
func (w *world) get(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := w.dyn.Resource(dnsprovider.DNSProviders).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ready is the Ready condition's status and reason, "" when it has none.
func ready(u *unstructured.Unstructured) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// waitReady waits until the DNSProvider's Ready condition has status and
// reason, and returns the object.
func (w *world) waitReady(t *testing.T, ns, name, status, reason string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	eventually(t, 60*time.Second, func() bool {
		u = w.get(t, ns, name)
		s, r, _ := ready(u)
		return s == status && r == reason
	}, func() string { s, r, m := ready(u); return ns + "/" + name + " Ready " + s + " " + r + ": " + m })
	return u
}

// zoneList is the last zone list published for provider, nil when none.
func (w *world) zoneList(t *testing.T, provider string) *events.ZoneList {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := w.js.Stream(ctx, events.StreamObserved)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, events.ZonesSubject(provider))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var zl events.ZoneList
	if err := events.Unmarshal(m.Header, m.Data, &zl); err != nil {
		t.Fatal(err)
	}
	return &zl
}

func eventually(t *testing.T, within time.Duration, ok func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not after %s: %s", within, what())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// plant writes RRs into BIND behind zonestream's back.
func plant(t *testing.T, b *bind.Server, zone string, rrs ...string) {
	t.Helper()
	var insert []dns.RR
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		insert = append(insert, rr)
	}
	if err := b.Update(zone, insert, nil); err != nil {
		t.Fatal(err)
	}
}

// rfc2136Spec is the spec of a DNSProvider of BIND b's zone, with its
// TSIG secret in Secret secret.
func rfc2136Spec(b *bind.Server, zone, secret string) map[string]any {
	return map[string]any{
		"provider": "rfc2136",
		"settings": map[string]any{"rfc2136-host": b.Host, "rfc2136-port": itoa(b.Port), "rfc2136-zone": zone,
			"rfc2136-tsig-keyname": b.KeyName, "rfc2136-tsig-secret-alg": b.Algorithm, "rfc2136-tsig-axfr": "true"},
		"credentials": map[string]any{"secretRef": map[string]any{"name": secret}},
		"domains":     map[string]any{"include": []any{zone}},
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func unstructuredStrings(u *unstructured.Unstructured, path ...string) ([]string, bool, error) {
	return unstructured.NestedStringSlice(u.Object, path...)
}

func unstructuredString(u *unstructured.Unstructured, path ...string) (string, bool, error) {
	return unstructured.NestedString(u.Object, path...)
}

func statusInt(u *unstructured.Unstructured, field string) int64 {
	v, _, _ := unstructured.NestedInt64(u.Object, "status", field)
	return v
}

// metric is the value of the metric name with labels (all of them given),
// from the process' registry; -1 when there is none.
func metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
