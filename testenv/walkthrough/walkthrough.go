// Package walkthrough walks Services through create, change and delete on
// a real kube-apiserver and checks each step in a real BIND: the demo's
// story and the end-to-end tests' steps, in one place.
package walkthrough

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/testenv/bind"
)

// Walk acts on a cluster as a user would and checks each step in BIND
// with real DNS queries: the demo's walk-through, and the end-to-end
// tests' steps.
type Walk struct {
	Ctx  context.Context
	Kube kubernetes.Interface
	DNS  *bind.Server
	Zone string
}

// Create makes a LoadBalancer Service with the external-dns annotations
// given and sets its addresses.
func (w Walk) Create(name string, annotations map[string]string, ips ...string) error {
	ann := map[string]string{}
	for k, v := range annotations {
		ann["external-dns.alpha.kubernetes.io/"+k] = v
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Port: 443}}},
	}
	if _, err := w.Kube.CoreV1().Services("default").Create(w.Ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	Say("created Service default/%s %v", name, annotations)
	return w.setIPs(name, ips...)
}

// ChangeIP sets new load balancer addresses and waits for BIND.
func (w Walk) ChangeIP(name string, ips ...string) error {
	Say("changing the load balancer address of default/%s", name)
	return w.setIPs(name, ips...)
}

// setIPs sets the load balancer status, as a cloud controller would, and
// waits until BIND answers every address.
func (w Walk) setIPs(name string, ips ...string) error {
	svc, err := w.Kube.CoreV1().Services("default").Get(w.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if _, err := w.Kube.CoreV1().Services("default").UpdateStatus(w.Ctx, svc, metav1.UpdateOptions{}); err != nil {
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
		Say("  BIND answers %s %s %s (%s after the status was set)", host, dns.TypeToString[qtype], ip, time.Since(start).Round(time.Millisecond))
	}
	return w.waitFor("a-"+host, dns.TypeTXT, func(got []string) bool {
		if len(got) == 1 {
			Say("  ownership: a-%s TXT %q", host, got[0])
			return true
		}
		return false
	})
}

// Remove deletes a Service and waits until BIND has neither its records
// nor their ownership records.
func (w Walk) Remove(name string) error {
	svc, err := w.Kube.CoreV1().Services("default").Get(w.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	host := svc.Annotations["external-dns.alpha.kubernetes.io/hostname"]
	if err := w.Kube.CoreV1().Services("default").Delete(w.Ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	start := time.Now()
	Say("deleted Service default/%s", name)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{host, dns.TypeA}, {host, dns.TypeAAAA}, {"a-" + host, dns.TypeTXT}, {"aaaa-" + host, dns.TypeTXT}} {
		if err := w.waitFor(q.name, q.qtype, func(got []string) bool { return len(got) == 0 }); err != nil {
			return err
		}
	}
	Say("  BIND no longer has %s nor its ownership records (%s)", host, time.Since(start).Round(time.Millisecond))
	return nil
}

// Untouched checks that a record zonestream does not own still answers ip.
func (w Walk) Untouched(name, ip string) error {
	got, err := w.Answers(name, dns.TypeA)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0] != ip {
		return fmt.Errorf("%s, a record zonestream does not own, changed: %v", name, got)
	}
	Say("%s A %s, which zonestream does not own, is untouched", name, ip)
	return nil
}

func (w Walk) waitFor(name string, qtype uint16, ok func([]string) bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := w.Answers(name, qtype)
		if err == nil && ok(got) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("BIND still answers %s %s with %v (err %v) after 30s", name, dns.TypeToString[qtype], got, err)
		}
		select {
		case <-w.Ctx.Done():
			return w.Ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Answers are what BIND answers for name/qtype, as text.
func (w Walk) Answers(name string, qtype uint16) ([]string, error) {
	return AnswerTexts(w.DNS, name, qtype)
}

// AnswerTexts asks s for name/qtype and renders the answer's A, AAAA and
// TXT records, in the order given.
func AnswerTexts(s interface {
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

// Plant adds record to zone in s, as a record zonestream does not own.
func Plant(s *bind.Server, zone, record string) error {
	rr, err := dns.NewRR(record)
	if err != nil {
		return err
	}
	if err := s.Update(zone, []dns.RR{rr}, nil); err != nil {
		return err
	}
	Say("planted %s in BIND: a record zonestream does not own", record)
	return nil
}

var demoStart = time.Now()

// Say prints a step with the time since the process started.
func Say(format string, args ...any) {
	fmt.Printf("[%6.2fs] %s\n", time.Since(demoStart).Seconds(), fmt.Sprintf(format, args...))
}
