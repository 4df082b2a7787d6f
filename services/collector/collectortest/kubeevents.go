package collectortest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitObjectEvents waits for at least n Warning events on an object of
// kind and returns them as "reason: message" lines.
func WaitObjectEvents(tb testing.TB, ns, kind, name string, n int) string {
	tb.Helper()
	deadline := time.Now().Add(WaitFor)
	for {
		list, err := Cluster.Client.CoreV1().Events(ns).List(tb.Context(), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + name + ",involvedObject.kind=" + kind,
		})
		if err != nil {
			tb.Fatal(err)
		}
		var b strings.Builder
		warnings := 0
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeWarning {
				warnings++
			}
			b.WriteString(e.Type + " " + e.Reason + ": " + e.Message + "\n")
		}
		if warnings >= n {
			return b.String()
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d warning events on %s %s/%s, want %d:\n%s", warnings, kind, ns, name, n, b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ExpectEvents waits for a Warning event on the object for each of wants
// and checks that every one of wants appears in them.
func ExpectEvents(tb testing.TB, ns, kind, name string, wants ...string) {
	tb.Helper()
	evs := WaitObjectEvents(tb, ns, kind, name, len(wants))
	for _, want := range wants {
		if !strings.Contains(evs, want) {
			tb.Errorf("events lack %q:\n%s", want, evs)
		}
	}
}
