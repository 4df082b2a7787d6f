package service

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTransformPodKeepsOnlyWhatIsRead(t *testing.T) {
	in := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels:          map[string]string{"app": "web"},
			Annotations:     map[string]string{"external-dns.alpha.kubernetes.io/target": "192.0.2.1", "example.com/x": "y"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
			OwnerReferences: []metav1.OwnerReference{{Name: "rs"}}},
		Spec: corev1.PodSpec{Hostname: "web-0", NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.1.0.1", PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady}}},
	}
	out, err := TransformPod(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"external-dns.alpha.kubernetes.io/target": "192.0.2.1"}},
		Spec:   corev1.PodSpec{Hostname: "web-0", NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.1.0.1"},
	}
	if got := out.(*corev1.Pod); got.String() != want.String() {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if o, _ := TransformPod("not a pod"); o != "not a pod" {
		t.Fatal("foreign object changed")
	}
}

func TestTransformNodeKeepsAddresses(t *testing.T) {
	in := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"x": "y"}},
		Spec:       corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}},
			Images: []corev1.ContainerImage{{Names: []string{"big"}}}},
	}
	out, _ := TransformNode(in)
	got := out.(*corev1.Node)
	if got.Name != "n1" || got.Kind != "Node" || got.Labels != nil || got.Annotations != nil || got.Spec.PodCIDR != "" ||
		got.Status.Images != nil || len(got.Status.Addresses) != 1 {
		t.Fatalf("got %v", got)
	}
}

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
	if got, _ := podNode(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("podNode = %v", got)
	}
}
