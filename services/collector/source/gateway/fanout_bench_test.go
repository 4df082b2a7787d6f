package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// BenchmarkGatewayFanout measures how long a Gateway's new address takes
// to reach every route attached to it, with as many routes attached to
// another Gateway that must not be touched (they are checked after the
// loop). Real API server, real JetStream.
//
//	go test -run XXX -bench GatewayFanout -benchtime 5x .
func BenchmarkGatewayFanout(b *testing.B) {
	for _, n := range []int{50, 200} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
}

var benchSeq int

func benchFanout(b *testing.B, n int) {
	collectortest.InstallGatewayAPI(b)
	dc, err := dynamic.NewForConfig(collectortest.Cluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	benchSeq++
	ns := fmt.Sprintf("bench-fanout-%d-%d", benchSeq, time.Now().UnixNano()%1e6)
	if _, err := collectortest.Cluster.Client.CoreV1().Namespaces().Create(b.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	src := "gateway-httproute"
	createGateway(b, dc, ns, newGW("g", []string{"192.0.2.1"}, gwWeb))
	createGateway(b, dc, ns, newGW("h", []string{"192.0.2.2"}, gwWeb))
	cfg := gatewayConfig(ns, src)
	cfg.RESTConfig = collectortest.Cluster.Config
	c, err := collector.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, collectortest.JS) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(collectortest.WaitFor); c.Ready() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("collector not ready: %v", c.Ready())
		}
	}
	for i := range n {
		for _, gwName := range []string{"g", "h"} {
			r := gwRoute(gwHosts(fmt.Sprintf("%s%d.example.org", gwName, i)), nil, attach(gwName))
			r.name = fmt.Sprintf("%s%d", gwName, i)
			createRoute(b, dc, src, ns, "", r)
		}
	}
	waitAll(b, ns, src, "g", n, "192.0.2.1")
	waitAll(b, ns, src, "h", n, "192.0.2.2")
	hBefore := benchCount(b, ns, src, "h", n)

	addr := 0
	for b.Loop() {
		addr++
		target := fmt.Sprintf("198.51.100.%d", addr%250+1)
		g, err := dc.Resource(gwGVR("gateways")).Namespace(ns).Get(b.Context(), "g", metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		setGatewayAddresses(b, dc, g, target)
		waitAll(b, ns, src, "g", n, target)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "routes/s")
	if got := benchCount(b, ns, src, "h", n); got != hBefore {
		b.Fatalf("routes of the unchanged Gateway got %d messages, had %d", got, hBefore)
	}
}

// waitAll waits until every route prefix0..prefix<n-1> has target.
func waitAll(b *testing.B, ns, src, prefix string, n int, target string) {
	b.Helper()
	st, err := collectortest.JS.Stream(b.Context(), events.StreamSources)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < n; {
		subj := events.SourceSubject(ns, src, ns, fmt.Sprintf("%s%d", prefix, i))
		msg, err := st.GetLastMsgForSubject(b.Context(), subj)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			b.Fatal(err)
		}
		var s events.SourceState
		if err == nil {
			if err := events.Unmarshal(msg.Header, msg.Data, &s); err != nil {
				b.Fatal(err)
			}
		}
		if len(s.Endpoints) == 1 && len(s.Endpoints[0].Targets) == 1 && s.Endpoints[0].Targets[0] == target {
			i++
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: %+v, want target %s", subj, s.Endpoints, target)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func benchCount(b *testing.B, ns, src, prefix string, n int) uint64 {
	b.Helper()
	st, err := collectortest.JS.Stream(b.Context(), events.StreamSources)
	if err != nil {
		b.Fatal(err)
	}
	one := events.SourceSubject(ns, src, ns, "x")
	filter := strings.TrimSuffix(one, "x") + "*"
	info, err := st.Info(b.Context(), jetstream.WithSubjectFilter(filter))
	if err != nil {
		b.Fatal(err)
	}
	var total uint64
	for i := range n {
		total += info.State.Subjects[events.SourceSubject(ns, src, ns, fmt.Sprintf("%s%d", prefix, i))]
	}
	return total
}
