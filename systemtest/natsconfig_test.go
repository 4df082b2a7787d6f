package systemtest

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/pki"
)

// securedBus is a nats-server run from the configuration zonestream
// nats-config generated, with the streams made by the operator.
type securedBus struct {
	url  string
	dir  string // the identities' seeds
	conf []byte
	// tls are the client side's TLS flags when the bus speaks TLS.
	tls []string
}

// startSecuredBus generates the configuration for clusters and providers,
// runs a nats-server from it on loopback, and creates the streams with
// the operator's credentials (zonestream streams ensure).
func startSecuredBus(t *testing.T, clusters, providers []string, natsConfigArgs ...string) *securedBus {
	return startBus(t, clusters, providers, false, natsConfigArgs...)
}

// startSecuredBusTLS is startSecuredBus speaking TLS only, the server
// requiring a client certificate of its CA from every process.
func startSecuredBusTLS(t *testing.T, clusters, providers []string, natsConfigArgs ...string) *securedBus {
	return startBus(t, clusters, providers, true, natsConfigArgs...)
}

func startBus(t *testing.T, clusters, providers []string, withTLS bool, natsConfigArgs ...string) *securedBus {
	t.Helper()
	b := &securedBus{dir: t.TempDir()}
	args := append([]string{"--out-dir=" + b.dir, "--listen=" + loopback.Addr(t), "--store-dir=" + t.TempDir(), "--http="}, natsConfigArgs...)
	if withTLS {
		certs := t.TempDir()
		ca := pki.New(t, certs, "ca")
		serverCert, serverKey := ca.Issue(t, certs, "nats", x509.ExtKeyUsageServerAuth)
		clientCert, clientKey := ca.Issue(t, certs, "zonestream", x509.ExtKeyUsageClientAuth)
		args = append(args, "--tls-cert="+serverCert, "--tls-key="+serverKey, "--tls-ca="+ca.File, "--tls-verify")
		b.tls = []string{"--nats-tls-ca=" + ca.File, "--nats-tls-cert=" + clientCert, "--nats-tls-key=" + clientKey}
	}
	for _, c := range clusters {
		args = append(args, "--cluster="+c)
	}
	for _, p := range providers {
		args = append(args, "--provider="+p)
	}
	var conf bytes.Buffer
	if err := cli.NatsConfigCommand(args, &conf, io.Discard); err != nil {
		t.Fatal(err)
	}
	b.conf = conf.Bytes()
	file := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(file, b.conf, 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("nats-server rejects the generated configuration: %v\n%s", err, b.conf)
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	b.url = s.ClientURL()
	ensure := append([]string{"ensure", "--nats-url=" + b.url}, b.flags(events.OperatorPermissions())...)
	if err := cli.Streams(ensure); err != nil {
		t.Fatalf("zonestream streams ensure with the operator's credentials: %v", err)
	}
	return b
}

// flags are the command-line flags of a process of identity p.
func (b *securedBus) flags(p events.Permissions) []string {
	return append(cli.IdentityFlags(b.dir, p), b.tls...)
}

// creds are the credentials of identity p.
func (b *securedBus) creds(t *testing.T, p events.Permissions) stage.Credentials {
	t.Helper()
	fs := flag.NewFlagSet(p.Identity, flag.ContinueOnError)
	var c stage.Credentials
	c.RegisterFlags(fs)
	if err := fs.Parse(b.flags(p)); err != nil {
		t.Fatal(err)
	}
	return c
}

// logBuffer is a log a test reads while the service writes it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// connectAs connects as a service does (stage.Connect: streams checked,
// refusals counted and logged) with identity p's credentials.
func (b *securedBus) connectAs(t *testing.T, p events.Permissions) (jetstream.JetStream, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, js, err := stage.Connect(ctx, b.url, "test-"+p.Identity, b.creds(t, p), slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatalf("%s cannot connect and find its streams: %v\n%s", p.Identity, err, log)
	}
	t.Cleanup(nc.Close)
	// Refused API requests get no answer: wait for them briefly.
	js, err = jetstream.New(nc, jetstream.WithDefaultTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return js, log
}

func violations(op string) float64 {
	var m dto.Metric
	if err := stage.PermissionViolations.WithLabelValues(op).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// refused runs do, which the server must refuse on subject: do fails,
// the violation counter of op goes up, and the log names the subject.
func refused(t *testing.T, log *logBuffer, op, subject string, do func() error) error {
	t.Helper()
	before := violations(op)
	err := do()
	if err == nil {
		t.Fatalf("%s on %s was allowed", op, subject)
	}
	waitUntil(t, "the refusal of "+subject+" counted and logged", 5*time.Second, func() error {
		if violations(op) <= before {
			return errors.New("zonestream_nats_permission_violations_total did not go up")
		}
		if !strings.Contains(log.String(), "subject="+subject+" ") || !strings.Contains(log.String(), "permissions violation") {
			return errors.New("no log line names it: " + log.String())
		}
		return nil
	})
	return err
}

func sourceEvent(cluster string) *events.SourceState {
	return &events.SourceState{
		Object:    events.ObjectRef{Cluster: cluster, Source: "service", Namespace: "default", Name: "web"},
		Endpoints: []events.Endpoint{{DNSName: "web.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}}},
	}
}

// publishesAndReadsItsOwn: the collector of cluster publishes an object
// and reads it back; it returns the object's subject.
func publishesAndReadsItsOwn(t *testing.T, js jetstream.JetStream, cluster string) string {
	t.Helper()
	ctx := context.Background()
	own := events.SourceSubject(cluster, "service", "default", "web")
	last := events.NewLastAck(js, events.StreamSources)
	if _, _, err := last.Publish(ctx, own, sourceEvent(cluster), ""); err != nil {
		t.Fatalf("%s cannot publish its own object: %v", cluster, err)
	}
	// What it checks after a reconnect instead of reading everything back.
	n := events.Reconnects(js)
	if err := js.Conn().ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a reconnect", 10*time.Second, func() error {
		if events.Reconnects(js) == n {
			return errors.New("not reconnected")
		}
		return nil
	})
	if kept, err := last.Kept(ctx); err != nil || !kept {
		t.Fatalf("%s cannot find its newest message in the stream: kept %v, %v", cluster, kept, err)
	}
	if h, err := events.LastHashes(ctx, js, events.StreamSources, events.SourceFilter(cluster)); err != nil || len(h) != 1 {
		t.Fatalf("%s cannot read its own objects back: %v %v", cluster, h, err)
	}
	return own
}

// TestClusterCredentialsAreConfinedToTheirCluster runs the generated
// configuration in a real nats-server and tries, with cluster a's
// collector credentials, what only others may do.
func TestClusterCredentialsAreConfinedToTheirCluster(t *testing.T) {
	b := startSecuredBus(t, []string{"a", "b"}, []string{"inmemory"})
	js, log := b.connectAs(t, events.CollectorPermissions("a"))
	ctx := context.Background()

	// What a collector of a does is allowed: publish its objects, read
	// them back, read its claim.
	own := publishesAndReadsItsOwn(t, js, "a")
	sources, err := js.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sources.GetLastMsgForSubject(ctx, own); err != nil {
		t.Fatalf("a cannot read its own last state: %v", err)
	}

	// The pipeline's outcome, for the status of its objects: read, never written.
	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	for _, f := range [][2]string{{events.StreamDesired, events.SubjectDesired + ".>"}, {events.StreamResults, events.SubjectResults + ".>"},
		{events.StreamObserved, events.SubjectObserved + ".>"}, {events.StreamObserved, events.SubjectZones + ".>"}} {
		if _, err := events.Watch(wctx, js, f[0], []string{f[1]}, func(events.Received) {}); err != nil {
			t.Errorf("a cannot read %s %s: %v", f[0], f[1], err)
		}
	}
	desired := events.DesiredSubject("web.example.org")
	err = refused(t, log, "publish", desired, func() error {
		_, _, err := events.Publish(ctx, js, desired, &events.DesiredState{DNSName: "web.example.org"}, "")
		return err
	})
	if !errors.Is(err, events.ErrPermissionDenied) {
		t.Errorf("publishing desired state fails with %v, want a permission error", err)
	}

	// Publishing as cluster b.
	other := events.SourceSubject("b", "service", "default", "web")
	err = refused(t, log, "publish", other, func() error {
		_, _, err := events.Publish(ctx, js, other, sourceEvent("b"), "")
		return err
	})
	if !errors.Is(err, events.ErrPermissionDenied) {
		t.Errorf("publishing as b fails with %v, want a permission error", err)
	}
	// Publishing a plan.
	plan := events.PlanSubject("inmemory", "example.org")
	err = refused(t, log, "publish", plan, func() error {
		_, _, err := events.Publish(ctx, js, plan, &events.Plan{ID: "forged", Provider: "inmemory", Zone: "example.org"}, "")
		return err
	})
	if !errors.Is(err, events.ErrPermissionDenied) {
		t.Errorf("publishing a plan fails with %v, want a permission error", err)
	}
	// Reading cluster b's objects.
	refused(t, log, "publish", "$JS.API.CONSUMER.CREATE.ZS_SOURCES.peek.zs.src.b.>", func() error {
		_, err := js.CreateConsumer(ctx, events.StreamSources, jetstream.ConsumerConfig{Name: "peek", FilterSubject: events.SourceFilter("b")})
		return err
	})
	// Purging and deleting streams, deleting a message, changing a stream.
	refused(t, log, "publish", "$JS.API.STREAM.PURGE.ZS_SOURCES", func() error { return sources.Purge(ctx) })
	refused(t, log, "publish", "$JS.API.STREAM.DELETE.ZS_PLANS", func() error { return js.DeleteStream(ctx, events.StreamPlans) })
	refused(t, log, "publish", "$JS.API.STREAM.MSG.DELETE.ZS_SOURCES", func() error { return sources.DeleteMsg(ctx, 1) })
	refused(t, log, "publish", "$JS.API.STREAM.UPDATE.ZS_SOURCES", func() error {
		cfg := sources.CachedInfo().Config
		cfg.Subjects = append(cfg.Subjects, "zs.plan.>")
		_, err := js.UpdateStream(ctx, cfg)
		return err
	})
	// Listening to the plans as they are published.
	refused(t, log, "subscribe", "zs.plan.>", func() error {
		sub, err := js.Conn().SubscribeSync("zs.plan.>")
		if err != nil {
			return err
		}
		_, err = sub.NextMsg(2 * time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			return nil // no error: the subscription was not refused
		}
		return err
	})
	// Its own leader lease is a's to take; dedup's and b's collector's are not.
	leases, err := js.KeyValue(ctx, events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Create(ctx, events.CollectorLease("a", "service"), []byte("{}")); err != nil {
		t.Fatalf("a cannot take its own collector lease: %v", err)
	}
	for _, key := range []string{events.DedupLease(), events.CollectorLease("b", "service")} {
		refused(t, log, "publish", "$KV."+events.BucketLeases+"."+key, func() error {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := leases.Create(cctx, key, []byte("{}"))
			return err
		})
	}

	// Nothing was deleted: the streams and a's object are there.
	op, _ := b.connectAs(t, events.OperatorPermissions())
	for _, s := range events.Streams() {
		if _, err := op.Stream(ctx, s.Name); err != nil {
			t.Errorf("stream %s: %v", s.Name, err)
		}
	}
	st, err := op.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, own); err != nil {
		t.Errorf("a's object is gone: %v", err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, other); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("the object forged as b is stored: %v", err)
	}
	plans, err := op.Stream(ctx, events.StreamPlans)
	if err != nil {
		t.Fatal(err)
	}
	if n := plans.CachedInfo().State.Msgs; n != 0 {
		t.Errorf("%d forged plans are queued", n)
	}
}

// TestMissingInboxPrefixIsExplained: a stage started with its key but not
// its inbox prefix is refused its replies, and its log says which flag
// is missing.
func TestMissingInboxPrefixIsExplained(t *testing.T) {
	b := startSecuredBus(t, []string{"a"}, []string{"inmemory"})
	creds := b.creds(t, events.DedupPermissions())
	creds.InboxPrefix = "_INBOX"
	log := &logBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if nc, _, err := stage.Connect(ctx, b.url, "test", creds, slog.New(slog.NewTextHandler(log, nil))); err == nil {
		nc.Close()
		t.Fatal("connected and found the streams without a reply inbox")
	}
	if !strings.Contains(log.String(), "--nats-inbox-prefix") {
		t.Fatalf("the log does not name --nats-inbox-prefix:\n%s", log)
	}
}

// TestCollectorWithoutStatusReadsOnlyItsOwn: with nats-config
// --collector-status=false a collector still publishes and reads back its
// own objects, and may read nothing else: no other cluster's desired
// state, observed state, zone list, result or held delete.
func TestCollectorWithoutStatusReadsOnlyItsOwn(t *testing.T) {
	b := startSecuredBus(t, []string{"a", "b"}, []string{"inmemory"}, "--collector-status=false")
	p := events.CollectorPermissionsWithoutStatus("a")
	if !slices.Equal(p.StageFlags, []string{"--kube-status=false"}) {
		t.Fatalf("a collector without status runs with %v", p.StageFlags)
	}
	js, log := b.connectAs(t, p)
	ctx := context.Background()
	publishesAndReadsItsOwn(t, js, "a")
	for _, f := range [][2]string{{events.StreamDesired, events.SubjectDesired + ".>"}, {events.StreamObserved, events.SubjectObserved + ".>"},
		{events.StreamObserved, events.SubjectZones + ".>"}, {events.StreamResults, events.SubjectResults + ".>"}, {events.StreamHeld, events.SubjectHeld + ".>"}} {
		refused(t, log, "publish", "$JS.API.CONSUMER.CREATE."+f[0]+".peek."+f[1], func() error {
			_, err := js.CreateConsumer(ctx, f[0], jetstream.ConsumerConfig{Name: "peek", FilterSubject: f[1]})
			return err
		})
	}
}
