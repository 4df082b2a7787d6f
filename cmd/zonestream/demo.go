package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// demo shows zonestream working on a machine with no cluster: it starts a
// local kube-apiserver and BIND, runs every stage against them, and walks
// a few Services through create, change and delete, checking each step
// with real DNS queries. It fails if any step does not show in BIND.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	keep := fs.Bool("keep-running", true, "keep everything running after the walk-through, until Ctrl-C")
	zone := fs.String("zone", "zonestream.test", "the DNS zone BIND serves")
	verbose := fs.Bool("verbose", false, "show zonestream's own logs")
	web := fs.String("portal-listen", "127.0.0.1:8080", "address of the portal's page (taken or port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	say("starting a local kube-apiserver (etcd + kube-apiserver, no nodes)")
	cluster, err := kube.Start(ctx)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	say("starting BIND on loopback, serving %s with a TSIG key", *zone)
	dnsServer, err := bind.Start(ctx, bind.Options{Zones: []string{*zone}})
	if err != nil {
		return err
	}
	defer dnsServer.Stop()
	legacy := "legacy." + *zone
	if err := plant(dnsServer, *zone, legacy+". 300 IN A 192.0.2.99"); err != nil {
		return err
	}
	dataDir, err := os.MkdirTemp("", "zonestream-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)

	flags := []string{
		"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--provider=rfc2136", "--rfc2136-host=127.0.0.1", "--rfc2136-port=" + strconv.Itoa(dnsServer.Port),
		"--rfc2136-zone=" + *zone, "--rfc2136-tsig-keyname=" + dnsServer.KeyName,
		"--rfc2136-tsig-secret=" + dnsServer.Secret, "--rfc2136-tsig-secret-alg=" + dnsServer.Algorithm,
		"--rfc2136-tsig-axfr", "--domain-filter=" + *zone, "--txt-owner-id=demo",
		"--policy=sync", "--registry=txt", "--interval=10s",
	}
	webAddr, err := portalAddr(*web)
	if err != nil {
		return err
	}
	local := []string{"--nats-listen=127.0.0.1:0", "--data-dir=" + dataDir, "--metrics-address=127.0.0.1:0",
		"--portal-listen=" + webAddr, "--portal-resolver=" + dnsServer.Addr, "--portal-grace=30s"}
	a := newAllInOne()
	if _, err := a.parse(append(slices.Clone(flags), local...)); err != nil {
		return err
	}
	var logOut io.Writer = io.Discard
	if *verbose {
		logOut = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	natsURL := make(chan string, 1)
	runErr := make(chan error, 1)
	go func() { runErr <- a.run(runCtx, true, logger, func(u string) { natsURL <- u }) }()
	select {
	case u := <-natsURL:
		say("zonestream is running, embedded JetStream at %s, as:\n\n    zonestream %s\n", u, strings.Join(flags, " \\\n      "))
	case err := <-runErr:
		return err
	}
	if err := waitPortal(ctx, "http://"+webAddr+"/"); err != nil {
		return err
	}
	fmt.Printf("web: http://%s/\n", webAddr)

	w := walk{ctx: ctx, kc: cluster.Client, dns: dnsServer, zone: *zone}
	steps := []func() error{
		func() error { return w.create("web", map[string]string{"hostname": "web." + *zone}, "192.0.2.10") },
		func() error {
			return w.create("api", map[string]string{"hostname": "api." + *zone, "ttl": "60"}, "192.0.2.20", "2001:db8::20")
		},
		func() error { return w.changeIP("web", "192.0.2.11") },
		func() error { return w.remove("api") },
		func() error { return w.untouched(legacy, "192.0.2.99") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	say("all checks passed")
	if *keep {
		say("still running. Try:\n\n    open http://%s/  (every name, why it exists, live)\n    kubectl --kubeconfig %s get services\n    dig @127.0.0.1 -p %d web.%s A +short\n\nCtrl-C stops everything.",
			webAddr, cluster.Kubeconfig, dnsServer.Port, *zone)
		<-ctx.Done()
	}
	cancelRun()
	if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// walk is the demo's walk-through: it acts on the cluster and checks BIND.
type walk struct {
	ctx  context.Context
	kc   kubernetes.Interface
	dns  *bind.Server
	zone string
}

func (w walk) create(name string, annotations map[string]string, ips ...string) error {
	ann := map[string]string{}
	for k, v := range annotations {
		ann["external-dns.alpha.kubernetes.io/"+k] = v
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Port: 443}}},
	}
	if _, err := w.kc.CoreV1().Services("default").Create(w.ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	say("created Service default/%s %v", name, annotations)
	return w.setIPs(name, ips...)
}

func (w walk) changeIP(name string, ips ...string) error {
	say("changing the load balancer address of default/%s", name)
	return w.setIPs(name, ips...)
}

// setIPs sets the load balancer status, as a cloud controller would, and
// waits until BIND answers every address.
func (w walk) setIPs(name string, ips ...string) error {
	svc, err := w.kc.CoreV1().Services("default").Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := w.kc.CoreV1().Services("default").UpdateStatus(w.ctx, svc, metav1.UpdateOptions{}); err != nil {
		return err
	}
	start := time.Now()
	host := svc.Annotations["external-dns.alpha.kubernetes.io/hostname"]
	for _, ip := range ips {
		qtype := dns.TypeA
		if net.ParseIP(ip).To4() == nil {
			qtype = dns.TypeAAAA
		}
		if err := w.waitFor(host, qtype, func(got []string) bool { return slices.Contains(got, ip) && len(got) == 1 }); err != nil {
			return err
		}
		say("  BIND answers %s %s %s (%s after the status was set)", host, dns.TypeToString[qtype], ip, time.Since(start).Round(time.Millisecond))
	}
	return w.waitFor("a-"+host, dns.TypeTXT, func(got []string) bool {
		if len(got) == 1 {
			say("  ownership: a-%s TXT %q", host, got[0])
			return true
		}
		return false
	})
}

func (w walk) remove(name string) error {
	svc, err := w.kc.CoreV1().Services("default").Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	host := svc.Annotations["external-dns.alpha.kubernetes.io/hostname"]
	if err := w.kc.CoreV1().Services("default").Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	start := time.Now()
	say("deleted Service default/%s", name)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{host, dns.TypeA}, {host, dns.TypeAAAA}, {"a-" + host, dns.TypeTXT}, {"aaaa-" + host, dns.TypeTXT}} {
		if err := w.waitFor(q.name, q.qtype, func(got []string) bool { return len(got) == 0 }); err != nil {
			return err
		}
	}
	say("  BIND no longer has %s nor its ownership records (%s)", host, time.Since(start).Round(time.Millisecond))
	return nil
}

func (w walk) untouched(name, ip string) error {
	got, err := w.answers(name, dns.TypeA)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0] != ip {
		return fmt.Errorf("%s, a record zonestream does not own, changed: %v", name, got)
	}
	say("%s A %s, which zonestream does not own, is untouched", name, ip)
	return nil
}

func (w walk) waitFor(name string, qtype uint16, ok func([]string) bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := w.answers(name, qtype)
		if err == nil && ok(got) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("BIND still answers %s %s with %v (err %v) after 30s", name, dns.TypeToString[qtype], got, err)
		}
		select {
		case <-w.ctx.Done():
			return w.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w walk) answers(name string, qtype uint16) ([]string, error) {
	return answerTexts(w.dns, name, qtype)
}

// answerTexts asks s for name/qtype and renders the answer's A, AAAA and
// TXT records, in the order given.
func answerTexts(s interface {
	Query(name string, qtype uint16) ([]dns.RR, error)
}, name string, qtype uint16) ([]string, error) {
	rrs, err := s.Query(name, qtype)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range rrs {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		case *dns.TXT:
			out = append(out, strings.Join(v.Txt, ""))
		}
	}
	return out, nil
}

func plant(s *bind.Server, zone, record string) error {
	rr, err := dns.NewRR(record)
	if err != nil {
		return err
	}
	if err := s.Update(zone, []dns.RR{rr}, nil); err != nil {
		return err
	}
	say("planted %s in BIND: a record zonestream does not own", record)
	return nil
}

var demoStart = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%6.2fs] %s\n", time.Since(demoStart).Seconds(), fmt.Sprintf(format, args...))
}
