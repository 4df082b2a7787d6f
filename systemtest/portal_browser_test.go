package systemtest

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestPortalInBrowser opens the portal's page in a real headless
// chromium: a Service created on a real kube-apiserver shows up live as
// pending while nothing plans it, then in sync once the planner and the
// applier run and BIND answers it; its detail names the Service that
// asked for the name and the plan that wrote it. Screenshots of both go to
// $ZS_ARTIFACTS (CI) or the test's artifact directory (go test -artifacts).
func TestPortalInBrowser(t *testing.T) {
	browser := chromium(t)
	const zone, owner = "browser.test", "browser"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	bus := natsenv.StartT(t)
	common := []string{"--nats-url=" + bus.ClientURL(), "--metrics-address=127.0.0.1:0"}
	web := loopback.Addr(t)
	stage := func(name string, args ...string) {
		startProcess(t, name, append(append([]string{name}, common...), args...)...)
	}
	stage("collector", "--kubeconfig="+cluster.Kubeconfig, "--source=service")
	stage("dedup")
	stage("portal", "--portal-listen="+web, "--portal-resolver="+ns.Addr, "--portal-dns-interval=2s", "--txt-owner-id="+owner)
	waitUntil(t, "the portal's page", 30*time.Second, func() error {
		resp, err := http.Get("http://" + web + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})

	ctx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+web+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on"))); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	t.Log("the page is open and live")

	name := "web." + zone
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default",
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": name}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
	}
	kc := cluster.Client.CoreV1().Services("default")
	created, err := kc.Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.42"}}
	if _, err := kc.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	row := `tr[data-name="` + name + `"]`
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row+`[data-status="pending"]`))); err != nil {
		t.Fatalf("the name never showed as pending: %v", err)
	}
	t.Logf("%s shows as pending", name)

	stage("planner", "--domain-filter="+zone, "--txt-owner-id="+owner, "--policy=sync", "--registry=txt")
	stage("applier", rfc2136Flags(ns, zone, owner)[:8]...)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row+`[data-status="in-sync"]`))); err != nil {
		t.Fatalf("the name never showed as in sync: %v", err)
	}
	t.Logf("%s shows as in sync", name)
	listShot := run(t, ctx, chromedp.FullScreenshot(100))
	inSync := run(t, ctx, chromedp.Text(chromedp.CSS(`[data-count="in-sync"]`)))
	pending := run(t, ctx, chromedp.Text(chromedp.CSS(`[data-count="pending"]`)))
	groups := run(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("details.zone")].map(d => d.dataset.zone).join(",")`))
	if inSync != "1" || pending != "0" || groups != zone {
		t.Errorf("live counts: %s in sync, %s pending; zones on the page %q: want 1, 0, %s", inSync, pending, groups, zone)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+` a`)), chromedp.WaitVisible(chromedp.CSS(`#contributors`))); err != nil {
		t.Fatalf("the name's detail did not open: %v", err)
	}
	objects := run(t, ctx, chromedp.Text(chromedp.CSS(`#contributors`)))
	plan := run(t, ctx, chromedp.Text(chromedp.CSS(`#plan`)))
	hist := run(t, ctx, chromedp.Text(chromedp.CSS(`#history`)))
	detailShot := run(t, ctx, chromedp.FullScreenshot(100))
	dir := artifacts(t)
	for file, shot := range map[string][]byte{"portal-list.png": listShot, "portal-detail.png": detailShot} {
		if err := os.WriteFile(filepath.Join(dir, file), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	if !strings.Contains(objects, "service default/web in cluster default") {
		t.Errorf("the detail names as asking for it: %q, want the Service default/web", objects)
	}
	if !strings.Contains(plan, "create "+name+" A → 192.0.2.42") || !strings.Contains(plan, "applied") {
		t.Errorf("the detail's plan says %q, want the create of %s and its result", plan, name)
	}
	for _, want := range []string{"default/service/default/web wants A 192.0.2.42", "rfc2136 holds at " + name} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history lacks %q:\n%s", want, hist)
		}
	}
}

// run runs a browser action that reads something.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// chromium is Debian's chromium, which hack/test.sh installs.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: apt-get install chromium (hack/test.sh does)")
	return ""
}

// artifacts is where a test leaves files for people to look at.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("ZS_ARTIFACTS"); dir != "" {
		dir = filepath.Join(dir, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.ArtifactDir()
}
