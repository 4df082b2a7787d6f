package systemtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/pdns"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

// externalDNSChart is ExternalDNS' own Helm chart, as its v0.21.0 module
// ships it (testdata/README.md). Its values files are
// testdata/external-dns-chart-*.yaml.
const (
	externalDNSChart     = "testdata/external-dns-chart"
	externalDNSNamespace = "external-dns"
)

// chartRun is zonestream run as ExternalDNS' chart has a pod run it.
type chartRun struct {
	*process
	container corev1.Container
	// probeAddr is where the chart's probes reach the process (its port
	// `http`, moved to a free loopback port).
	probeAddr string
}

// renderExternalDNSChart renders the chart with the values file and, if
// given, overlay: values only the test knows (where its DNS server
// listens), layered on the file as a second -f, as a user's own
// environment would be.
func renderExternalDNSChart(t *testing.T, valuesFile, overlay string) (objects string, deploy appsv1.Deployment) {
	t.Helper()
	helm := goTool(t, "ZS_HELM", "helm")
	args := []string{"template", "edns", externalDNSChart, "--namespace", externalDNSNamespace, "-f", filepath.Join("testdata", valuesFile)}
	if overlay != "" {
		f := filepath.Join(t.TempDir(), "overlay.yaml")
		if err := os.WriteFile(f, []byte(overlay), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-f", f)
	}
	objects = command(t, helm, args...)
	found := 0
	for _, doc := range strings.Split(objects, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if d.Kind == "Deployment" {
			deploy, found = d, found+1
		}
	}
	if found != 1 || len(deploy.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one Deployment of one container, got %d:\n%s", valuesFile, found, objects)
	}
	return objects, deploy
}

// runExternalDNSChart applies the release (its ServiceAccount and RBAC
// above all) to the cluster and starts zonestream with the container's
// arguments, exactly, and the environment the pod would have: the
// container's env, each secretKeyRef resolved from secrets ("name/key"),
// plus extraEnv (what the platform injects, e.g. a cloud's credentials).
//
// What a pod has and a process on this machine has not, substituted:
//   - --kubeconfig: a pod reaches the apiserver with its ServiceAccount's
//     token (in-cluster config); here, a kubeconfig for the test's
//     kube-apiserver that impersonates that same ServiceAccount, so that
//     the chart's RBAC is what zonestream runs under.
//   - --metrics-address=127.0.0.1:<free port>: the chart's probes and
//     Service reach container port 7979 (`http`), zonestream's default
//     --metrics-address :7979; on a shared machine 7979 may be taken.
//   - --nats-listen=127.0.0.1:0, --portal-listen=127.0.0.1:0: the embedded
//     NATS (4222) and the portal (8080) listen on the pod's own loopback,
//     which a process here shares with every other test.
//   - HOME and TMPDIR unwritable (/dev/null/...): the chart's
//     securityContext has readOnlyRootFilesystem and no volume, so the
//     image's home (/home/nonroot) and /tmp cannot be written; zonestream
//     then keeps its streams in memory, a scratch directory in /dev/shm,
//     as in the pod.
func runExternalDNSChart(t *testing.T, cluster *kube.Cluster, objects string, deploy appsv1.Deployment, secrets, extraEnv map[string]string) *chartRun {
	t.Helper()
	c := deploy.Spec.Template.Spec.Containers[0]
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || len(c.VolumeMounts) != 0 {
		t.Fatalf("the chart no longer runs a read-only root filesystem without volumes (%+v, %v): revisit the HOME/TMPDIR substitution", sc, c.VolumeMounts)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 7979 {
		t.Fatalf("the chart's container ports changed: %+v", c.Ports)
	}
	if def := cli.NewAllInOne().FlagSet().Lookup("metrics-address").DefValue; def != ":7979" {
		t.Fatalf("zonestream's --metrics-address defaults to %s, not the chart's port 7979", def)
	}

	file := filepath.Join(t.TempDir(), "release.yaml")
	if err := os.WriteFile(file, []byte(objects), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: externalDNSNamespace}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is needed to apply the release: ", err)
	}
	// As helm install does, objects without a namespace (the Role of a
	// namespaced release) go to the release's.
	command(t, kubectl, "--kubeconfig", cluster.Kubeconfig, "apply", "-n", externalDNSNamespace, "-f", file)

	kubeconfig := serviceAccountKubeconfig(t, cluster, externalDNSNamespace, deploy.Spec.Template.Spec.ServiceAccountName)
	env := []string{"HOME=/dev/null/home", "TMPDIR=/dev/null/tmp"}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			// As the kubelet gives it: the limit in bytes (divisor 1).
			lim, ok := c.Resources.Limits[corev1.ResourceMemory]
			if !ok {
				t.Fatalf("env %s: the container has no memory limit", e.Name)
			}
			env = append(env, e.Name+"="+strconv.FormatInt(lim.Value(), 10))
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			v, ok := secrets[ref]
			if !ok {
				t.Fatalf("env %s: the test has no Secret %s", e.Name, ref)
			}
			env = append(env, e.Name+"="+v)
		default:
			t.Fatalf("env %s: cannot resolve %+v", e.Name, e.ValueFrom)
		}
	}
	for k, v := range extraEnv {
		env = append(env, k+"="+v)
	}
	probe := "127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t))
	args := append(slices.Clone(c.Args), "--kubeconfig="+kubeconfig, "--metrics-address="+probe,
		"--nats-listen=127.0.0.1:0", "--portal-listen=127.0.0.1:0")
	r := &chartRun{container: c, probeAddr: probe}
	// Registered before the process, so it runs after the kill (SIGKILL:
	// no cleanup of its own): the scratch directory the process named in
	// its log, as text or JSON.
	t.Cleanup(func() {
		if m := regexp.MustCompile(`scratch_dir"?[=:]"?(/dev/shm/zonestream-\d+)`).FindSubmatch(r.log.Bytes()); m != nil {
			os.RemoveAll(string(m[1]))
		}
	})
	r.process = startWithEnv(t, "zonestream", binary, env, args...)
	return r
}

// serviceAccountKubeconfig is the admin kubeconfig of the test cluster,
// impersonating the ServiceAccount namespace/name with the groups a
// ServiceAccount token carries.
func serviceAccountKubeconfig(t *testing.T, cluster *kube.Cluster, namespace, name string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.Impersonate = "system:serviceaccount:" + namespace + ":" + name
		u.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	}
	file := filepath.Join(t.TempDir(), "serviceaccount.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// probesPass waits for the chart's liveness and readiness probes to be
// answered 200 on the probe port, within the time the kubelet would give
// each before acting (initial delay + period x failure threshold).
func (r *chartRun) probesPass(t *testing.T) {
	t.Helper()
	start := time.Now()
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
	}{{"liveness", r.container.LivenessProbe}, {"readiness", r.container.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Port.String() != "http" {
			t.Fatalf("the chart's %s probe is no httpGet on port http: %+v", p.kind, p.probe)
		}
		limit := time.Duration(p.probe.InitialDelaySeconds+p.probe.PeriodSeconds*p.probe.FailureThreshold)*time.Second - time.Since(start)
		url := "http://" + r.probeAddr + p.probe.HTTPGet.Path
		c := http.Client{Timeout: time.Duration(p.probe.TimeoutSeconds) * time.Second}
		waitUntil(t, "the chart's "+p.kind+" probe "+p.probe.HTTPGet.Path, limit, func() error {
			resp, err := c.Get(url)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", url, resp.Status)
			}
			return nil
		})
	}
}

// logged says whether the process' log holds s.
func (r *chartRun) logged(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.log.String(), s)
}

// serviceBecomesRecord creates a LoadBalancer Service annotated with
// host, gives it ip as a cloud controller would, and waits until server
// answers host A ip and its ownership TXT names owner.
func serviceBecomesRecord(t *testing.T, client kubernetes.Interface, server interface {
	Query(string, uint16) ([]dns.RR, error)
}, host, ip, owner string) {
	t.Helper()
	annotatedService(t, client, host, ip)
	waitUntil(t, host+" A "+ip+" in the DNS server", 90*time.Second, func() error {
		got, err := walkthrough.AnswerTexts(server, host, dns.TypeA)
		if err == nil && !slices.Equal(got, []string{ip}) {
			err = fmt.Errorf("%s A: %v", host, got)
		}
		if err != nil {
			return err
		}
		txt, err := walkthrough.AnswerTexts(server, "a-"+host, dns.TypeTXT)
		if err == nil && (len(txt) != 1 || !strings.Contains(txt[0], "external-dns/owner="+owner+",")) {
			err = fmt.Errorf("a-%s TXT: %v", host, txt)
		}
		return err
	})
}

// annotatedService creates a LoadBalancer Service annotated with host and
// gives it ip, as a cloud controller would.
func annotatedService(t *testing.T, client kubernetes.Interface, host, ip string) {
	t.Helper()
	ctx := context.Background()
	name := strings.Split(host, ".")[0]
	svc, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": host}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if _, err := client.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestExternalDNSChart runs zonestream as ExternalDNS' own Helm chart
// deploys it when a user sets image.repository to zonestream's image:
// the chart rendered with each values file, the container's arguments
// exactly, its env, under the chart's RBAC, with a read-only root
// filesystem (see runExternalDNSChart for what is substituted and why).
// Each run must answer the chart's probes; rfc2136 (BIND) and pdns
// (PowerDNS) must put an annotated Service's record in the real server;
// a release full of ExternalDNS flags must start and be ready. aws and cloudflare: TestExternalDNSChartCloud.
func TestExternalDNSChart(t *testing.T) {
	t.Run("rfc2136", func(t *testing.T) {
		cluster := kube.StartT(t, externalDNSChart+"/crds")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The key name the values file gives.
		ns, err := bind.Start(ctx, bind.Options{Zones: []string{"example.org"}, KeyName: "externaldns-key."})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ns.Stop() })
		objects, deploy := renderExternalDNSChart(t, "external-dns-chart-rfc2136.yaml",
			fmt.Sprintf("extraArgs: {rfc2136-host: 127.0.0.1, rfc2136-port: %d}\n", ns.Port))
		args := deploy.Spec.Template.Spec.Containers[0].Args
		for _, want := range []string{"--events", "--provider=rfc2136", "--rfc2136-tsig-axfr", "--rfc2136-port=" + strconv.Itoa(ns.Port)} {
			if !slices.Contains(args, want) {
				t.Fatalf("the chart does not pass %s: %v", want, args)
			}
		}
		if strings.Contains(strings.Join(args, " "), "tsig-secret=") {
			t.Fatalf("the TSIG secret is on the command line: %v", args)
		}
		r := runExternalDNSChart(t, cluster, objects, deploy, map[string]string{"rfc2136-keys/rfc2136-tsig-secret": ns.Secret}, nil)
		r.probesPass(t)
		serviceBecomesRecord(t, cluster.Client, ns, "web.example.org", "192.0.2.10", "k8s")
		if !r.logged("flag=--events") || !r.logged("keeps its streams in memory") {
			t.Error("the log does not say --events is ignored and the streams are in memory")
		}
	})

	t.Run("pdns", func(t *testing.T) {
		cluster := kube.StartT(t, externalDNSChart+"/crds")
		s := pdns.StartT(t, "example.org")
		objects, deploy := renderExternalDNSChart(t, "external-dns-chart-pdns.yaml", "extraArgs: {pdns-server: '"+s.APIURL+"'}\n")
		r := runExternalDNSChart(t, cluster, objects, deploy, map[string]string{"pdns-api/api-key": s.APIKey}, nil)
		r.probesPass(t)
		serviceBecomesRecord(t, cluster.Client, s, "web.example.org", "192.0.2.20", "k8s")
	})

	t.Run("flags", func(t *testing.T) {
		cluster := kube.StartT(t, externalDNSChart+"/crds")
		objects, deploy := renderExternalDNSChart(t, "external-dns-chart-flags.yaml", "")
		r := runExternalDNSChart(t, cluster, objects, deploy, nil, nil)
		r.probesPass(t)
		// logLevel: warning (as ExternalDNS' chart spells it), logFormat:
		// json: the warning that the streams are in memory shows, the
		// ignored flags (info) do not.
		if !r.logged(`"level":"warning","msg":"the default --data-dir is not writable`) {
			t.Error("no JSON warning that the streams are in memory")
		}
		// Beyond the chart's probes: every stage ready, the collector
		// synced under the chart's Role (namespaced: true).
		waitUntil(t, "/readyz", time.Minute, func() error { return ready(r.probeAddr) })
	})
}
