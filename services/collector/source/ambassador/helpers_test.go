package ambassador_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/ambassador"
)

var hosts = schema.GroupVersionResource{Group: "getambassador.io", Version: "v2", Resource: "hosts"}

// config runs the source over every namespace (the Service a Host names
// is usually in Ambassador's own), under a cluster name of the case's own.
func config(clusterName string) collector.Config {
	return collector.Config{ClusterName: clusterName, Sources: []string{ambassador.Name}}
}

func subject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, ambassador.Name, ns, name)
}

// host is a getambassador.io/v2 Host.
func host(name, hostname string, annotations, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "getambassador.io/v2", "kind": "Host",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"hostname": hostname},
	}}
	u.SetAnnotations(annotations)
	u.SetLabels(labels)
	return u
}

// lbService is Ambassador's Service: its external IPs and load balancer
// ingress entries, each "ip", "hostname" or "ip|hostname" (one entry
// with both).
type lbService struct {
	name        string
	externalIPs []string
	lb          [][2]string
}

func (s lbService) create(t *testing.T, ns string) *corev1.Service {
	t.Helper()
	svc := collectortest.Service(s.name, corev1.ServiceTypeLoadBalancer, nil)
	svc.Spec.ExternalIPs = s.externalIPs
	var ing []corev1.LoadBalancerIngress
	for _, e := range s.lb {
		ing = append(ing, corev1.LoadBalancerIngress{IP: e[0], Hostname: e[1]})
	}
	return collectortest.CreateService(t, ns, svc, ing...)
}

// lb is a load balancer ingress entry from an address: an IP or a hostname.
func lb(addr string) [2]string {
	if _, err := netip.ParseAddr(addr); err == nil {
		return [2]string{addr, ""}
	}
	return [2]string{"", addr}
}
