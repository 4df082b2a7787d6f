package collectortest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Nodes are cluster-scoped and shared by the whole package: a test labels
// its Nodes with CaseLabel=<namespace of the case> and runs its collector
// with --label-filter on it.
const CaseLabel = "zonestream.test/case"

// ExternalIP is a Node address of type ExternalIP.
func ExternalIP(a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: a}
}

// InternalIP is a Node address of type InternalIP.
func InternalIP(a string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a}
}

// CreateNode creates node (labelled for case ns) with its status
// addresses and deletes it when the test ends.
func CreateNode(tb testing.TB, ns string, node *corev1.Node, addrs ...corev1.NodeAddress) *corev1.Node {
	tb.Helper()
	node = node.DeepCopy()
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	node.Labels[CaseLabel] = ns
	got, err := Cluster.Client.CoreV1().Nodes().Create(tb.Context(), node, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := Cluster.Client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}); err != nil {
			tb.Errorf("delete node %s: %v", node.Name, err)
		}
	})
	if len(addrs) == 0 {
		return got
	}
	return SetNodeAddresses(tb, got, addrs...)
}

// SetNodeAddresses sets the status addresses of node, as a kubelet would.
func SetNodeAddresses(tb testing.TB, node *corev1.Node, addrs ...corev1.NodeAddress) *corev1.Node {
	tb.Helper()
	node = node.DeepCopy()
	node.Status.Addresses = addrs
	got, err := Cluster.Client.CoreV1().Nodes().UpdateStatus(tb.Context(), node, metav1.UpdateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}
