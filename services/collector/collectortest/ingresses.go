package collectortest

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Ingress builds an Ingress with a default backend (so that it is valid
// with or without rules), a rule per host and one TLS block of tlsHosts.
func Ingress(name string, annotations map[string]string, hosts []string, tlsHosts ...string) *networkingv1.Ingress {
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
	for _, h := range hosts {
		in.Spec.Rules = append(in.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	if len(tlsHosts) > 0 {
		in.Spec.TLS = []networkingv1.IngressTLS{{Hosts: tlsHosts, SecretName: "cert"}}
	}
	return in
}

// IngressLB is a load balancer status of addrs, IPs or hostnames.
func IngressLB(addrs ...string) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, a := range addrs {
		if strings.ContainsAny(a, ":") || strings.Trim(a, "0123456789.") == "" {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			out = append(out, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return out
}

// CreateIngress creates in in ns and, if lb is given, sets its load
// balancer status as an ingress controller would.
func CreateIngress(tb testing.TB, ns string, in *networkingv1.Ingress, lb []networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
	tb.Helper()
	in = in.DeepCopy()
	in.Namespace = ns
	got, err := Cluster.Client.NetworkingV1().Ingresses(ns).Create(tb.Context(), in, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(lb) > 0 {
		got.Status.LoadBalancer.Ingress = lb
		if got, err = Cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(tb.Context(), got, metav1.UpdateOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	return got
}
