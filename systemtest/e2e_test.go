package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// zonestreamPackage is the binary's package, which TestMain builds.
const zonestreamPackage = "github.com/zonestream/zonestream/cmd/zonestream"

// binary is the zonestream binary the end-to-end tests run as processes,
// built with binaryTags (the test binary's own build tags that change
// zonestream: externaldns).
var (
	binary     string
	binaryTags string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zonestream-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "zonestream")
	build := exec.Command("go", "build", "-tags="+binaryTags, "-o", binary, zonestreamPackage)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zonestream:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a zonestream process a test started; it is killed at the end
// of the test, and its log shown if the test failed.
type process struct {
	t    testing.TB
	name string
	bin  string
	args []string
	// env, when not nil, is the process' whole environment; nil inherits
	// the test's.
	env []string
	cmd *exec.Cmd
	log *bytes.Buffer
	// logFile is $ZS_STAGE_LOGS' copy of log, while the process runs.
	logFile *os.File
	mu      sync.Mutex
}

func startProcess(t testing.TB, name string, args ...string) *process {
	t.Helper()
	return startCommand(t, name, binary, args...)
}

// startCommand is startProcess for another program than zonestream.
func startCommand(t testing.TB, name, bin string, args ...string) *process {
	t.Helper()
	return startWithEnv(t, name, bin, nil, args...)
}

// startWithEnv is startCommand with env as the process' whole
// environment (nil: the test's).
func startWithEnv(t testing.TB, name, bin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{t: t, name: name, bin: bin, args: args, env: env, log: &bytes.Buffer{}}
	p.start()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			// Enough to see what each stage did in a failing test's last minutes.
			t.Logf("--- log of %s (last 16 KiB) ---\n%s", name, lastBytes(p.log.Bytes(), 16<<10))
		}
	})
	return p
}

func (p *process) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// $ZS_STAGE_LOGS keeps every process' whole log, across its restarts,
	// in DIR/<name>.log: what a slow trial of a long chaos run did.
	if dir := os.Getenv("ZS_STAGE_LOGS"); dir != "" {
		f, err := os.OpenFile(filepath.Join(dir, p.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			p.t.Fatalf("log of %s: %v", p.name, err)
		}
		p.logFile = f                    // closed once the process ended: the copy writes to it until then
		both := io.MultiWriter(p.log, f) // one writer: one goroutine writes p.log
		cmd.Stdout, cmd.Stderr = both, both
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	p.cmd = cmd
}

// kill ends the process the hard way: no shutdown code runs.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
	if p.logFile != nil {
		p.logFile.Close()
		p.logFile = nil
	}
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// rfc2136Flags is the ExternalDNS command line for a BIND server.
func rfc2136Flags(s *bind.Server, zone, owner string) []string {
	return []string{
		"--provider=rfc2136", "--rfc2136-host=127.0.0.1", "--rfc2136-port=" + strconv.Itoa(s.Port),
		"--rfc2136-zone=" + zone, "--rfc2136-tsig-keyname=" + s.KeyName,
		"--rfc2136-tsig-secret=" + s.Secret, "--rfc2136-tsig-secret-alg=" + s.Algorithm,
		"--rfc2136-tsig-axfr", "--domain-filter=" + zone, "--txt-owner-id=" + owner,
		"--policy=sync", "--registry=txt",
	}
}

// TestServiceRecordLifecycle runs the all-in-one binary with an ExternalDNS
// command line against a real kube-apiserver and BIND, and follows one
// Service through create, change and delete with DNS queries.
func TestServiceRecordLifecycle(t *testing.T) {
	const zone = "e2e.test"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s"},
		rfc2136Flags(ns, zone, "e2e")...)
	startProcess(t, "zonestream", args...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := walkthrough.Walk{Ctx: ctx, Kube: cluster.Client, DNS: ns, Zone: zone}
	steps := []struct {
		name string
		do   func() error
	}{
		{"create web", func() error { return w.Create("web", map[string]string{"hostname": "web." + zone}, "192.0.2.10") }},
		{"create dual-stack api", func() error {
			return w.Create("api", map[string]string{"hostname": "api." + zone, "ttl": "60"}, "192.0.2.20", "2001:db8::20")
		}},
		{"web's address changes", func() error { return w.ChangeIP("web", "192.0.2.11") }},
		{"api is deleted", func() error { return w.Remove("api") }},
		{"unowned record untouched", func() error { return w.Untouched("legacy."+zone, "192.0.2.99") }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	// The zone holds exactly what is wanted: nothing left behind.
	want := []string{
		"@ NS ns." + zone, "ns A 127.0.0.1", "legacy A 192.0.2.99", "web A 192.0.2.11",
		"a-web TXT heritage=external-dns,external-dns/owner=e2e,external-dns/resource=service/default/web",
	}
	if got := zoneContents(t, ns, zone); !slices.Equal(got, sorted(want)) {
		t.Fatalf("zone holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(sorted(want), "\n"))
	}
	// The API of api's TTL annotation reached BIND before it was deleted:
	// covered by create's wait; here, web's TTL is the provider default.
	rrs, err := ns.Query("web."+zone, dns.TypeA)
	if err != nil || len(rrs) != 1 || rrs[0].Header().Ttl == 0 {
		t.Fatalf("web A: %v %v", rrs, err)
	}
}

// zoneContents transfers the zone and renders every record but the SOA as
// "name TYPE data", names relative to the zone, sorted.
func zoneContents(t testing.TB, s *bind.Server, zone string) []string {
	t.Helper()
	out, err := transferZone(s, zone)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func transferZone(s *bind.Server, zone string) ([]string, error) {
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(s.KeyName, dns.HmacSHA256, 300, time.Now().Unix())
	// miekg/dns waits 2 s for each message: BIND sending a zone of millions
	// of records on a busy machine may pause longer.
	tr := &dns.Transfer{TsigSecret: s.TsigSecret(), ReadTimeout: 10 * time.Second}
	envs, err := tr.In(m, s.Addr)
	if err != nil {
		return nil, err
	}
	var out []string
	for env := range envs {
		if env.Error != nil {
			return nil, env.Error
		}
		for _, rr := range env.RR {
			h := rr.Header()
			if h.Rrtype == dns.TypeSOA {
				continue
			}
			name := strings.TrimSuffix(strings.TrimSuffix(h.Name, "."), "."+zone)
			if name == zone {
				name = "@"
			}
			data := strings.TrimPrefix(rr.String(), h.String())
			if txt, ok := rr.(*dns.TXT); ok {
				data = strings.Join(txt.Txt, "")
			}
			out = append(out, name+" "+dns.TypeToString[h.Rrtype]+" "+strings.TrimSuffix(data, "."))
		}
	}
	return sorted(out), nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// setLoadBalancer creates the LoadBalancer Service name (with
// annotations) unless it exists, and sets its load balancer addresses, as
// a cloud controller would: IPs, or a hostname.
func setLoadBalancer(ctx context.Context, services typedcorev1.ServiceInterface, name string, annotations map[string]string, addrs ...string) error {
	svc, err := services.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		svc, err = services.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, a := range addrs {
		in := corev1.LoadBalancerIngress{IP: a}
		if net.ParseIP(a) == nil {
			in = corev1.LoadBalancerIngress{Hostname: a}
		}
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, in)
	}
	_, err = services.UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}
