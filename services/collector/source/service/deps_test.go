package service

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIndexFuncs(t *testing.T) {
	svc := func(typ corev1.ServiceType, clusterIP string, etp corev1.ServiceExternalTrafficPolicy, ann map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", Annotations: ann},
			Spec: corev1.ServiceSpec{Type: typ, ClusterIP: clusterIP, ExternalTrafficPolicy: etp}}
	}
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{"headless", svc(corev1.ServiceTypeClusterIP, "None", "", nil), []string{"pods/ns"}},
		{"headless NodeExternalIP", svc(corev1.ServiceTypeClusterIP, "None", "", map[string]string{"external-dns.alpha.kubernetes.io/endpoints-type": "NodeExternalIP"}),
			[]string{"pods/ns", "nodes-of-pods/ns"}},
		{"headless with target", svc(corev1.ServiceTypeClusterIP, "None", "", map[string]string{"external-dns.kubernetes.io/target": "192.0.2.1"}), nil},
		{"clusterIP", svc(corev1.ServiceTypeClusterIP, "10.96.0.1", "", nil), nil},
		{"nodeport cluster", svc(corev1.ServiceTypeNodePort, "10.96.0.1", corev1.ServiceExternalTrafficPolicyCluster, nil), []string{"nodes"}},
		{"nodeport local", svc(corev1.ServiceTypeNodePort, "10.96.0.1", corev1.ServiceExternalTrafficPolicyLocal, nil), []string{"pods/ns", "nodes-of-pods/ns"}},
		{"loadbalancer", svc(corev1.ServiceTypeLoadBalancer, "10.96.0.1", corev1.ServiceExternalTrafficPolicyLocal, nil), nil},
	} {
		if got, _ := serviceDeps(tc.svc); !slices.Equal(got, tc.want) {
			t.Errorf("%s: serviceDeps = %v, want %v", tc.name, got, tc.want)
		}
	}
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
	if got, _ := endpointSliceService(es); !slices.Equal(got, []string{"ns/web"}) {
		t.Errorf("endpointSliceService = %v", got)
	}
}
