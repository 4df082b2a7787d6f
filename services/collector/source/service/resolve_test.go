package service_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	servicesource "github.com/zonestream/zonestream/services/collector/source/service"
)

// lbDNS is an authoritative DNS server on loopback whose answers a test
// changes while it runs: what the load balancer hostnames resolve to.
type lbDNS struct {
	addr string

	mu       sync.Mutex
	records  map[string][]string // FQDN -> addresses
	servfail map[string]bool
	queries  map[string]int
}

func startLBDNS(t *testing.T) *lbDNS {
	t.Helper()
	d := &lbDNS{records: map[string][]string{}, servfail: map[string]bool{}, queries: map[string]int{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return d
}

func (d *lbDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	d.mu.Lock()
	d.queries[name]++
	addrs, known := d.records[name]
	fail := d.servfail[name]
	d.mu.Unlock()
	switch {
	case fail:
		m.Rcode = dns.RcodeServerFailure
	case !known:
		m.Rcode = dns.RcodeNameError
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		switch {
		case q.Qtype == dns.TypeA && ip.To4() != nil:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: ip})
		case q.Qtype == dns.TypeAAAA && ip.To4() == nil:
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 1}, AAAA: ip})
		}
	}
	_ = w.WriteMsg(m)
}

func (d *lbDNS) set(name string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records[dns.Fqdn(name)] = addrs
	delete(d.servfail, dns.Fqdn(name))
}

func (d *lbDNS) fail(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.servfail[dns.Fqdn(name)] = true
}

func (d *lbDNS) queried(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[dns.Fqdn(name)]
}

// resolver asks only this server, never the machine's resolvers.
func (d *lbDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "udp", d.addr)
	}}
}

func resolveConfig(ns string, d *lbDNS) collector.Config {
	return collector.Config{ClusterName: ns, Namespace: ns, Service: servicesource.Flags{
		ResolveLoadBalancerHostname: true, Resolver: d.resolver(), ResolveInterval: 100 * time.Millisecond}}
}

func lbHostnames(names ...string) []corev1.LoadBalancerIngress {
	var out []corev1.LoadBalancerIngress
	for _, n := range names {
		out = append(out, corev1.LoadBalancerIngress{Hostname: n})
	}
	return out
}

// --resolve-service-load-balancer-hostname: which targets a load balancer
// hostname gives.
func TestServiceRuleResolveLoadBalancerHostname(t *testing.T) {
	d := startLBDNS(t)
	d.set("lb1.cloud.test", "192.0.2.10", "2001:db8::10")
	d.set("lb2.cloud.test", "192.0.2.20")
	d.set("nov4.cloud.test") // exists, no address
	for _, tc := range []struct {
		name    string
		resolve bool
		lb      []corev1.LoadBalancerIngress
		want    []events.Endpoint
	}{
		{"hostname resolved to A and AAAA", true, lbHostnames("lb1.cloud.test"),
			[]events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.10"), collectortest.EP(webHost, "AAAA", "2001:db8::10")}},
		{"flag off: CNAME", false, lbHostnames("lb1.cloud.test"),
			[]events.Endpoint{collectortest.EP(webHost, "CNAME", "lb1.cloud.test")}},
		{"several hostnames and an IP", true,
			append(lbHostnames("lb1.cloud.test", "lb2.cloud.test"), corev1.LoadBalancerIngress{IP: "192.0.2.1"}),
			[]events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.1", "192.0.2.10", "192.0.2.20"), collectortest.EP(webHost, "AAAA", "2001:db8::10")}},
		{"unknown hostname skipped, the rest published", true,
			append(lbHostnames("nxdomain.cloud.test"), corev1.LoadBalancerIngress{IP: "192.0.2.1"}),
			[]events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.1")}},
		{"hostname without address skipped", true,
			append(lbHostnames("nov4.cloud.test"), corev1.LoadBalancerIngress{IP: "192.0.2.1"}),
			[]events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := resolveConfig(ns, d)
			cfg.Service.ResolveLoadBalancerHostname = tc.resolve
			collectortest.StartCollector(t, cfg)
			collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", webHost, nil), tc.lb...)
			collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), tc.want)
		})
	}
}

// An unresolvable hostname is reported on the Service.
func TestServiceResolveFailureReported(t *testing.T) {
	d := startLBDNS(t)
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "service", servicesource.ReasonUnresolvableHostname)
	collectortest.StartCollector(t, resolveConfig(ns, d))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", webHost, nil), append(lbHostnames("nxdomain.cloud.test"), corev1.LoadBalancerIngress{IP: "192.0.2.1"})...)
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.1")})
	evs := collectortest.WaitObjectEvents(t, ns, "Service", "web", 1)
	if !strings.Contains(evs, servicesource.ReasonUnresolvableHostname) || !strings.Contains(evs, "nxdomain.cloud.test") {
		t.Errorf("events:\n%s", evs)
	}
	if got := collectortest.InvalidInput(t, "service", servicesource.ReasonUnresolvableHostname) - before; got < 1 {
		t.Errorf("metric grew by %v", got)
	}
}

// The addresses are resolved again periodically: a change in DNS alone is
// published. While the resolver fails, the last state stays.
func TestServiceResolveFollowsDNS(t *testing.T) {
	d := startLBDNS(t)
	d.set("lb.cloud.test", "192.0.2.10")
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, resolveConfig(ns, d))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", webHost, nil), lbHostnames("lb.cloud.test")...)
	subj := collectortest.ServiceSubject(ns, ns, "web")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.10")})

	d.set("lb.cloud.test", "192.0.2.11")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.11")})
	n := collectortest.Count(t, subj)

	// A failing resolver: asked again and again, and nothing published.
	d.fail("lb.cloud.test")
	q := d.queried("lb.cloud.test")
	deadline := time.Now().Add(collectortest.WaitFor)
	for d.queried("lb.cloud.test") < q+6 {
		if time.Now().After(deadline) {
			t.Fatal("hostname not resolved again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := collectortest.Count(t, subj); got != n {
		t.Fatalf("%d messages while the resolver failed, want %d", got, n)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.11")})

	d.set("lb.cloud.test", "192.0.2.12", "2001:db8::12")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(webHost, "A", "192.0.2.12"), collectortest.EP(webHost, "AAAA", "2001:db8::12")})
}
