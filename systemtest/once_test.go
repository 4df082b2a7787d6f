package systemtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

// TestOnceAndDryRun: --dry-run plans and shows the plans (zonestream
// plans) and leaves BIND as it is; --once exits 0 once a pass converged
// and non-zero when a plan could not be applied (BIND refuses a wrong TSIG
// key), as ExternalDNS' --once.
func TestOnceAndDryRun(t *testing.T) {
	const zone = "once.test"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := walkthrough.Walk{Ctx: ctx, Kube: cluster.Client, DNS: ns, Zone: zone}
	if err := setLoadBalancer(ctx, cluster.Client.CoreV1().Services("default"), "web",
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web." + zone}, "192.0.2.10"); err != nil {
		t.Fatal(err)
	}
	common := func(dataDir string, extra ...string) []string {
		return append(append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--data-dir=" + dataDir,
			"--metrics-address=127.0.0.1:0", "--interval=1m"}, rfc2136Flags(ns, zone, "once")...), extra...)
	}

	// A dry run: the plan is shown, BIND untouched.
	port, metrics := freePort(t), freePort(t)
	dry := startProcess(t, "zonestream --dry-run", append(common(t.TempDir(), "--dry-run", "--nats-listen=127.0.0.1:"+port),
		"--metrics-address=127.0.0.1:"+metrics)...)
	var shown string
	waitUntil(t, "the dry run's plan in zonestream plans", time.Minute, func() error {
		out, err := exec.CommandContext(ctx, binary, "plans", "--nats-url=nats://127.0.0.1:"+port).CombinedOutput()
		shown = string(out)
		if err == nil && !strings.Contains(shown, "+ web."+zone+" A 192.0.2.10") {
			err = errors.New("not shown yet: " + shown)
		}
		return err
	})
	if !strings.Contains(shown, "dry run ") {
		t.Fatalf("the plan is not marked as a dry run:\n%s", shown)
	}
	time.Sleep(time.Second) // an applier taking the plan would have written it by now
	if got, err := w.Answers("web."+zone, dns.TypeA); err != nil || len(got) != 0 {
		t.Fatalf("a dry run wrote to BIND: %v %v", got, err)
	}
	// ExternalDNS' metrics, as its users' dashboards read them: the
	// provider listed (its NS and the ns A), one endpoint wanted.
	waitUntil(t, "ExternalDNS' metrics", 30*time.Second, func() error {
		resp, err := http.Get("http://127.0.0.1:" + metrics + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"\nexternal_dns_source_endpoints_total 1\n", "\nexternal_dns_registry_endpoints_total 2\n",
			"\nexternal_dns_registry_errors_total 0\n", "\nexternal_dns_source_errors_total 0\n",
			// By record type, as ExternalDNS' vectors.
			"\nexternal_dns_source_records{record_type=\"A\"} 1\n",
			"\nexternal_dns_registry_records{record_type=\"A\"} 1\n", "\nexternal_dns_registry_records{record_type=\"NS\"} 1\n"} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("no %q in /metrics", strings.TrimSpace(want))
			}
		}
		if !regexp.MustCompile(`\nexternal_dns_controller_last_sync_timestamp_seconds 1\.[0-9.e+]+\n`).Match(body) {
			return errors.New("no last sync time in /metrics")
		}
		return nil
	})
	dry.kill()

	// --once: one pass, then exit 0, the record in BIND.
	out, err := runOnce(ctx, common(t.TempDir(), "--once", "--nats-listen=127.0.0.1:0"))
	if err != nil {
		t.Fatalf("--once: %v\n%s", err, lastBytes(out, 4096))
	}
	if got, err := w.Answers("web."+zone, dns.TypeA); err != nil || !slices.Equal(got, []string{"192.0.2.10"}) {
		t.Fatalf("after --once BIND answers %v %v", got, err)
	}

	// --once with a record BIND refuses (a host name with '_': BIND's
	// check-names): the plan fails, the exit status says so.
	if err := setLoadBalancer(ctx, cluster.Client.CoreV1().Services("default"), "bad",
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": "bad_host." + zone}, "192.0.2.20"); err != nil {
		t.Fatal(err)
	}
	out, err = runOnce(ctx, common(t.TempDir(), "--once", "--nats-listen=127.0.0.1:0"))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(string(out), "plans not applied") {
		t.Fatalf("--once with a plan BIND refuses: %v, want a non-zero exit saying plans were not applied\n%s", err, lastBytes(out, 4096))
	}
	if err := cluster.Client.CoreV1().Services("default").Delete(ctx, "bad", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// --once with a key BIND refuses: the provider cannot be listed.
	if err := setLoadBalancer(ctx, cluster.Client.CoreV1().Services("default"), "web", nil, "192.0.2.11"); err != nil {
		t.Fatal(err)
	}
	args := common(t.TempDir(), "--once", "--nats-listen=127.0.0.1:0")
	for i, a := range args {
		if strings.HasPrefix(a, "--rfc2136-tsig-secret=") {
			args[i] = "--rfc2136-tsig-secret=" + "d3JvbmcgYnV0IHZhbGlkIGJhc2U2NA=="
		}
	}
	out, err = runOnce(ctx, args)
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("--once with a plan BIND refuses: %v, want a non-zero exit\n%s", err, lastBytes(out, 4096))
	}
	if !strings.Contains(string(out), "not converged") {
		t.Fatalf("the exit does not say what failed:\n%s", lastBytes(out, 4096))
	}
}

// runOnce runs zonestream --once to its end.
func runOnce(ctx context.Context, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, binary, args...).CombinedOutput()
}

// freePort is a loopback TCP port free now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// TestOnceEndsWhenTheAPIServerNeverAnswers: an API server that takes the
// connection and never answers leaves the collector unsynced, so the
// desired state is never complete. --once still ends, non-zero, at
// --once-timeout, saying on one line what the pass waited for.
func TestOnceEndsWhenTheAPIServerNeverAnswers(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "http://%s"}}]
contexts: [{name: silent, context: {cluster: silent, user: nobody}}]
users: [{name: nobody, user: {}}]
current-context: silent
`, silent.Addr())), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary, "--kubeconfig="+kubeconfig, "--source=service", "--provider=inmemory",
		"--inmemory-zone=silent.test", "--data-dir="+t.TempDir(), "--nats-listen=127.0.0.1:0", "--metrics-address=127.0.0.1:0",
		"--once", "--once-timeout=5s").CombinedOutput()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("--once against an API server that never answers: %v after %s, want a non-zero exit\n%s", err, took, lastBytes(out, 4096))
	}
	if ctx.Err() != nil {
		t.Fatalf("--once did not end within a minute\n%s", lastBytes(out, 4096))
	}
	if !strings.Contains(string(out), "did not end within --once-timeout=5s: the desired state is not complete") {
		t.Fatalf("the exit does not say what the pass waited for (after %s):\n%s", took, lastBytes(out, 4096))
	}
	t.Logf("--once ended after %s", took.Round(time.Millisecond))
}
