package containers

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/testcontainers/testcontainers-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

const zone = "example.org"

// pipeline is zonestream as four containers around a NATS container,
// between the harness' kube-apiserver and BIND.
type pipeline struct {
	kc     kubernetes.Interface
	dns    *bind.Server
	stages map[string]*stageContainer
}

func startPipeline(t *testing.T) *pipeline {
	t.Helper()
	cluster := kube.StartT(t)
	server := bind.StartT(t, zone)
	url := startNATS(t)
	p := &pipeline{kc: cluster.Client, dns: server, stages: map[string]*stageContainer{}}
	// Marks renewed every 2s, so that a restarted stage's deletes wait
	// seconds, not the default 30s (README: Safety).
	heartbeat := "--heartbeat-interval=2s"
	p.stages["collector"] = startStage(t, "collector", nil,
		[]testcontainers.ContainerFile{{HostFilePath: cluster.Kubeconfig, ContainerFilePath: "/kube/config", FileMode: 0o444}},
		"--nats-url="+url, "--kubeconfig=/kube/config", "--source=service", "--cluster-name=systest", heartbeat)
	p.stages["dedup"] = startStage(t, "dedup", nil, nil, "--nats-url="+url, heartbeat)
	p.stages["planner"] = startStage(t, "planner", nil, nil, "--nats-url="+url,
		"--domain-filter="+zone, "--txt-owner-id=systest", "--policy=sync")
	// The TSIG secret as a Deployment passes it: from the environment.
	p.stages["applier"] = startStage(t, "applier", map[string]string{"EXTERNAL_DNS_RFC2136_TSIG_SECRET": server.Secret}, nil,
		"--nats-url="+url, "--provider=rfc2136", "--rfc2136-host="+server.Host, "--rfc2136-port="+strconv.Itoa(server.Port),
		"--rfc2136-zone="+zone, "--rfc2136-tsig-keyname="+server.KeyName, "--rfc2136-tsig-secret-alg="+server.Algorithm,
		"--rfc2136-tsig-axfr", "--interval=10s")
	return p
}

// create makes a LoadBalancer Service wanting host and gives it ip, as a
// cloud controller would.
func (p *pipeline) create(t *testing.T, name, host, ip string) {
	t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/hostname": host}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}},
	}
	created, err := p.kc.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if _, err := p.kc.CoreV1().Services("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (p *pipeline) delete(t *testing.T, name string) {
	t.Helper()
	if err := p.kc.CoreV1().Services("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// answers is what BIND answers for host's A record: its address, or ""
// when it has none.
func (p *pipeline) answers(t *testing.T, host string) string {
	t.Helper()
	rrs, err := p.dns.Query(host, dns.TypeA)
	if err != nil {
		t.Fatalf("query %s: %v", host, err)
	}
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok {
			return a.A.String()
		}
	}
	return ""
}

// converge waits until BIND answers want (host -> address, "" for none)
// for every host, and fails with what differs after timeout.
func (p *pipeline) converge(t *testing.T, want map[string]string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		wrong := map[string]string{}
		for host, ip := range want {
			if got := p.answers(t, host); got != ip {
				wrong[host] = fmt.Sprintf("%q, want %q", got, ip)
			}
		}
		if len(wrong) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%d of %d names not converged after %s: %v", len(wrong), len(want), timeout, wrong)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestPipelineInContainers runs every stage from the image in a container
// of its own: Services become records BIND answers, a deleted Service's
// record goes, and the others stay.
func TestPipelineInContainers(t *testing.T) {
	requireSystem(t)
	p := startPipeline(t)
	want := map[string]string{}
	start := time.Now()
	for i := range 10 {
		host := fmt.Sprintf("web-%d.%s", i, zone)
		p.create(t, fmt.Sprintf("web-%d", i), host, fmt.Sprintf("192.0.2.%d", i+1))
		want[host] = fmt.Sprintf("192.0.2.%d", i+1)
	}
	p.converge(t, want, 90*time.Second)
	t.Logf("10 Services answered by BIND %s after their creation", time.Since(start).Round(time.Millisecond))

	p.delete(t, "web-3")
	want["web-3."+zone] = ""
	took := p.converge(t, want, 90*time.Second)
	t.Logf("a deleted Service's record gone in %s, the other 9 kept", took.Round(time.Millisecond))
}

// TestKilledStageContainerLosesNothing kills each stage's container
// (SIGKILL) in turn during a burst of Service changes and starts it
// again. A watch polling BIND throughout sees no record of a Service that
// still exists go missing once it has answered, and at the end every
// record wanted is there and every record of a deleted Service is gone.
func TestKilledStageContainerLosesNothing(t *testing.T) {
	requireSystem(t)
	p := startPipeline(t)
	watch := watchRecords(t, p.dns)
	const services = 120
	want := map[string]string{}
	order := []string{"collector", "dedup", "planner", "applier"}
	start := time.Now()
	for i := range services {
		host := fmt.Sprintf("svc-%d.%s", i, zone)
		ip := fmt.Sprintf("198.51.100.%d", i+1)
		p.create(t, fmt.Sprintf("svc-%d", i), host, ip)
		want[host] = ip
		watch.wanted(host, ip)
		// Every 10 Services, a deletion of an earlier one.
		if i%10 == 9 {
			gone := fmt.Sprintf("svc-%d", i-5)
			watch.release(gone + "." + zone)
			p.delete(t, gone)
			want[gone+"."+zone] = ""
		}
		// Every 25 Services, the next stage is killed and restarted.
		if i%25 == 24 {
			s := p.stages[order[(i/25)%len(order)]]
			t.Logf("killing %s after %d Services, %d names answered", s.name, i+1, watch.heldCount())
			s.killAndRestart(t)
		}
	}
	took := p.converge(t, want, 120*time.Second)
	// A few more passes of the watch over the converged zone.
	time.Sleep(time.Second)
	for _, l := range watch.finish() {
		t.Errorf("record lost: %s", l)
	}
	t.Logf("%d Services (%d deleted) through %d stage kills: converged %s after the last change, %s in all",
		services, services/10, services/25, took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
