package collectortest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// DynamicClient is a dynamic client of cfg, for the custom resources.
func DynamicClient(tb testing.TB, cfg *rest.Config) dynamic.Interface {
	tb.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return dc
}

// The Gateway API CRDs come with the sigs.k8s.io/gateway-api module this
// module requires, standard channel, as a user installs them.
var (
	gatewayAPIOnce sync.Once
	gatewayAPIErr  error
)

// GatewayCRDDir is where the Gateway API CRDs of the standard channel are.
func GatewayCRDDir(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		tb.Fatalf("locating sigs.k8s.io/gateway-api: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
}

// InstallGatewayAPI installs the Gateway API CRDs into the package's
// cluster, once.
func InstallGatewayAPI(tb testing.TB) {
	tb.Helper()
	gatewayAPIOnce.Do(func() { gatewayAPIErr = Cluster.InstallCRDs(GatewayCRDDir(tb)) })
	if gatewayAPIErr != nil {
		tb.Fatal(gatewayAPIErr)
	}
}

// CreateObject creates u, a custom resource of gvr, in ns.
func CreateObject(tb testing.TB, dc dynamic.Interface, gvr schema.GroupVersionResource, ns string, u *unstructured.Unstructured) *unstructured.Unstructured {
	tb.Helper()
	u = u.DeepCopy()
	u.SetNamespace(ns)
	got, err := dc.Resource(gvr).Namespace(ns).Create(tb.Context(), u, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}
