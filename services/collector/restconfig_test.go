package collector

import (
	"testing"

	"k8s.io/client-go/rest"
)

// --kube-api-qps and --kube-api-burst reach the Kubernetes client.
func TestKubeAPILimits(t *testing.T) {
	rc, err := restConfig(Config{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}, KubeAPIQPS: 7, KubeAPIBurst: 9})
	if err != nil {
		t.Fatal(err)
	}
	if rc.QPS != 7 || rc.Burst != 9 {
		t.Fatalf("QPS %v, burst %d: want 7, 9", rc.QPS, rc.Burst)
	}
}
