package collectortest

import (
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
)

// ServiceSubject is the subject of Service ns/name of cluster clusterName.
func ServiceSubject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, "service", ns, name)
}

// CreateService creates svc in ns and, if lb is given, sets its load
// balancer status as a cloud controller would.
func CreateService(tb testing.TB, ns string, svc *corev1.Service, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	tb.Helper()
	svc = svc.DeepCopy()
	svc.Namespace = ns
	if len(svc.Spec.Ports) == 0 && svc.Spec.Type != corev1.ServiceTypeExternalName {
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	}
	got, err := Cluster.Client.CoreV1().Services(ns).Create(tb.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(lb) > 0 {
		got = SetLoadBalancer(tb, got, lb...)
	}
	return got
}

// SetLoadBalancer sets the load balancer status of svc.
func SetLoadBalancer(tb testing.TB, svc *corev1.Service, lb ...corev1.LoadBalancerIngress) *corev1.Service {
	tb.Helper()
	svc = svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = lb
	got, err := Cluster.Client.CoreV1().Services(svc.Namespace).UpdateStatus(tb.Context(), svc, metav1.UpdateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

var barrierSeq atomic.Int64

// Barrier creates a Service that publishes and waits for its state: with
// one worker, whatever the collector was sent before has been processed.
func Barrier(tb testing.TB, clusterName, ns string, adapt ...func(*corev1.Service)) {
	tb.Helper()
	name := fmt.Sprintf("zz-barrier-%d", barrierSeq.Add(1))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/hostname": name + ".barrier.test",
			"external-dns.alpha.kubernetes.io/target":   "192.0.2.254",
		}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	for _, f := range adapt {
		if f != nil {
			f(svc)
		}
	}
	if _, err := Cluster.Client.CoreV1().Services(ns).Create(tb.Context(), svc, metav1.CreateOptions{}); err != nil {
		tb.Fatal(err)
	}
	WaitState(tb, ServiceSubject(clusterName, ns, name), []events.Endpoint{events.NewEndpoint(name+".barrier.test", "A", 0, "192.0.2.254")})
}

// Service is a Service of type typ, to create with CreateService.
func Service(name string, typ corev1.ServiceType, annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: typ},
	}
}

// LoadBalancerIP is a load balancer status entry of an IP address.
func LoadBalancerIP(addr string) corev1.LoadBalancerIngress {
	return corev1.LoadBalancerIngress{IP: addr}
}

// LoadBalancerService is a LoadBalancer Service named hostname by the
// hostname annotation, with the extra annotations.
func LoadBalancerService(name, hostname string, extra map[string]string) *corev1.Service {
	a := map[string]string{Alpha + "hostname": hostname}
	for k, v := range extra {
		a[k] = v
	}
	return Service(name, corev1.ServiceTypeLoadBalancer, a)
}
