package source

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTransformPodKeepsOnlyWhatIsRead(t *testing.T) {
	in := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/target": "192.0.2.1", "example.com/x": "y",
				"team": "dns", lastApplied: "{}"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
			OwnerReferences: []metav1.OwnerReference{{Name: "rs"}}},
		Spec: corev1.PodSpec{Hostname: "web-0", NodeName: "n1", HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.1.0.1", PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}}},
	}
	out, err := TransformPod("team")(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"external-dns.alpha.kubernetes.io/target": "192.0.2.1", "team": "dns"}},
		Spec: corev1.PodSpec{Hostname: "web-0", NodeName: "n1", HostNetwork: true},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.1.0.1", PodIP: "10.0.0.1",
			PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if got := out.(*corev1.Pod); got.String() != want.String() {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if o, _ := TransformPod()("not a pod"); o != "not a pod" {
		t.Fatal("foreign object changed")
	}
}

func TestTransformNodeKeepsWhatIsRead(t *testing.T) {
	in := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u", Labels: map[string]string{"a": "b"},
			Annotations:   map[string]string{"x": "y", "external-dns.alpha.kubernetes.io/ttl": "60"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24", Unschedulable: true},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}},
			Images:     []corev1.ContainerImage{{Names: []string{"big"}}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady}}},
	}
	out, _ := TransformNode()(in)
	want := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u", Labels: map[string]string{"a": "b"},
			Annotations: map[string]string{"external-dns.alpha.kubernetes.io/ttl": "60"}},
		Spec:   corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}}},
	}
	if got := out.(*corev1.Node); got.String() != want.String() {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestPodNode(t *testing.T) {
	if got, _ := PodNode(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("PodNode = %v", got)
	}
	if got, _ := PodNode(&corev1.Pod{}); got != nil {
		t.Errorf("PodNode of unscheduled Pod = %v", got)
	}
}
