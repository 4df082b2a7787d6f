package skipper_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A collector started before its RouteGroup CRD is installed publishes the
// RouteGroups once it is, without a restart; and
// --skipper-routegroup-groupversion chooses the API read: here Skipper's
// CRD under another group, installed while the collector runs.
func TestRouteGroupCRDAppearsUnderTheFlagsGroup(t *testing.T) {
	const group = "skipper.zonestream.test"
	crd, err := os.ReadFile(filepath.Join("testdata", "routegroups.zalando.org.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.NewReplacer("name: routegroups.zalando.org", "name: routegroups."+group,
		"group: zalando.org", "group: "+group).Replace(string(crd))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(renamed), 0o600); err != nil {
		t.Fatal(err)
	}

	ns := collectortest.NewNamespace(t)
	cfg := config(ns)
	cfg.Skipper.GroupVersion = group + "/v1"
	cfg.Skipper.PollInterval = 100 * time.Millisecond
	collectortest.StartCollector(t, cfg)

	if err := collectortest.Cluster.InstallCRDs(dir); err != nil {
		t.Fatal(err)
	}
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "RouteGroup",
		"metadata": map[string]any{"name": "late"},
		"spec": map[string]any{"hosts": []any{"late.example.org"},
			"backends": []any{map[string]any{"name": "shunt", "type": "shunt"}}},
	}}
	created := collectortest.CreateObject(t, dc, schema.GroupVersionResource{Group: group, Version: "v1", Resource: "routegroups"}, ns, u)
	created.Object["status"] = map[string]any{"loadBalancer": map[string]any{"routegroup": []any{map[string]any{"ip": "192.0.2.77"}}}}
	if _, err := dc.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "routegroups"}).Namespace(ns).
		UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subject(ns, "late"), []events.Endpoint{collectortest.EP("late.example.org", "A", "192.0.2.77")})
}

// A --skipper-routegroup-groupversion that is not group/version stops the
// collector at start, with an error naming the flag.
func TestRouteGroupBadGroupVersionRefused(t *testing.T) {
	cfg := config("bad-groupversion")
	cfg.RESTConfig = collectortest.Cluster.Config
	cfg.Skipper.GroupVersion = "zalando.org"
	_, err := collector.New(cfg, collectortest.Logger(t))
	if err == nil || !strings.Contains(err.Error(), "--skipper-routegroup-groupversion") {
		t.Fatalf("collector.New: %v, want an error naming --skipper-routegroup-groupversion", err)
	}
}
