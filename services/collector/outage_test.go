package collector_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// startNATS runs a JetStream server of the test's own on a fixed loopback
// port and store, so that it can be stopped and started again.
func startNATS(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		ServerName: "outage", Host: "127.0.0.1", Port: port,
		JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return s
}

// While NATS is down, publishes fail and are retried with backoff; once it
// is back, the object's current state is published. Nothing is dropped.
func TestPublishRetriedWhileNATSDown(t *testing.T) {
	dir := t.TempDir()
	port, err := loopback.Port(false)
	if err != nil {
		t.Fatal(err)
	}
	srv := startNATS(t, port, dir)
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })

	// No reconnect buffer: a publish while disconnected fails at once
	// instead of waiting for the server.
	nc, err := nats.Connect(srv.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ojs, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := events.EnsureStreams(t.Context(), ojs); err != nil {
		t.Fatal(err)
	}

	ns := collectortest.NewNamespace(t)
	c, err := collector.New(collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config,
		Sources: []string{"service"}, Workers: 1}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, ojs) }()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(collectortest.WaitFor):
			t.Error("Run did not return after the test")
		}
	})
	deadline := time.Now().Add(collectortest.WaitFor)
	for c.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v", c.Ready())
		}
		time.Sleep(20 * time.Millisecond)
	}

	last := func() string {
		st, err := ojs.Stream(ctx, events.StreamSources)
		if err != nil {
			return ""
		}
		msg, err := st.GetLastMsgForSubject(ctx, collectortest.ServiceSubject(ns, ns, "web"))
		if err != nil {
			return ""
		}
		var s events.SourceState
		if err := events.Unmarshal(msg.Header, msg.Data, &s); err != nil {
			t.Fatal(err)
		}
		return collectortest.Render(s.Endpoints)
	}
	waitLast := func(want string) {
		t.Helper()
		deadline := time.Now().Add(collectortest.WaitFor)
		for last() != want {
			if time.Now().After(deadline) {
				t.Fatalf("last state %q, want %q", last(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	s := collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", "web.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	waitLast(collectortest.Render([]events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.1")}))

	errorsBefore := testutil.ToFloat64(collector.PublishErrorsMetric())
	srv.Shutdown()
	srv.WaitForShutdown()
	collectortest.SetLoadBalancer(t, s, collectortest.LoadBalancerIP("192.0.2.2"))
	deadline = time.Now().Add(collectortest.WaitFor)
	for testutil.ToFloat64(collector.PublishErrorsMetric()) < errorsBefore+2 {
		if time.Now().After(deadline) {
			t.Fatal("no failed publish counted while NATS was down")
		}
		time.Sleep(20 * time.Millisecond)
	}

	srv = startNATS(t, port, dir)
	waitLast(collectortest.Render([]events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.2")}))

	select {
	case err := <-done:
		done <- err
		t.Fatalf("Run returned during the outage: %v", err)
	default:
	}
}
