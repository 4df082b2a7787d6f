package collectortest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitFor bounds every wait for the collector or the bus.
const WaitFor = 20 * time.Second

var seq atomic.Int64

// NewNamespace creates a namespace of its own for one test or case; its
// name is also used as the cluster name, so that subjects never collide.
func NewNamespace(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", seq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := Cluster.Client.CoreV1().Namespaces().Create(tb.Context(), ns, metav1.CreateOptions{}); err != nil {
		tb.Fatal(err)
	}
	return name
}
