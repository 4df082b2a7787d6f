package unstructured_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A status the templates read changing republishes the object; an
// annotation change too; a deleted object is a tombstone.
func TestUnstructuredLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	create(t, ns, object{res: vmis, kind: "VirtualMachineInstance", name: "vm", status: interfaces("", "10.0.0.1")})
	cfg := config(ns, vmis)
	templates("{{.Name}}.vms.example.org", `{{index .Status.interfaces 0 "ipAddress"}}`, "", false)(&cfg)
	collectortest.StartCollector(t, cfg)
	subj := subject(ns, ns, vmis, "vm")
	collectortest.WaitState(t, subj, list(ep("vm.vms.example.org", "A", "10.0.0.1")))

	client := collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(vmis.gvr).Namespace(ns)
	u, err := client.Get(t.Context(), "vm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = interfaces("", "10.0.0.2")
	if u, err = client.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, list(ep("vm.vms.example.org", "A", "10.0.0.2")))

	u.SetAnnotations(ann("ttl", "60"))
	if _, err = client.Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, list(ttl(ep("vm.vms.example.org", "A", "10.0.0.2"), 60)))

	if err := client.Delete(t.Context(), "vm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
}

// Two resources may hold objects of one name: each has its own subject,
// the resource in the key's name.
func TestUnstructuredSameNameInTwoResources(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	create(t, ns, object{res: vmis, kind: "VirtualMachineInstance", name: "web", annotations: ann("hostname", "vm.example.org", "target", "192.0.2.1")})
	create(t, ns, object{res: configMaps, kind: "ConfigMap", name: "web", annotations: ann("hostname", "cm.example.org", "target", "192.0.2.2")})
	collectortest.StartCollector(t, config(ns, vmis, configMaps))
	expect(t, subject(ns, ns, vmis, "web"), list(ep("vm.example.org", "A", "192.0.2.1")))
	expect(t, subject(ns, ns, configMaps, "web"), list(ep("cm.example.org", "A", "192.0.2.2")))
	if got := subject(ns, ns, configMaps, "web"); !strings.Contains(got, "configmaps") {
		t.Fatalf("subject %s does not name the resource", got)
	}
}

// A cluster-scoped resource is read whatever --namespace says, its
// objects under the empty namespace.
func TestUnstructuredClusterScoped(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	name := ns + "-site" // cluster-scoped: unique across the package's tests
	create(t, "", object{res: sites, kind: "Site", name: name, annotations: ann("hostname", name+".example.org", "target", "192.0.2.7")})
	t.Cleanup(func() {
		_ = collectortest.DynamicClient(t, collectortest.Cluster.Config).Resource(sites.gvr).Delete(t.Context(), name, metav1.DeleteOptions{})
	})
	collectortest.StartCollector(t, config(ns, sites))
	expect(t, subject(ns, "", sites, name), list(ep(name+".example.org", "A", "192.0.2.7")))
}

// A resource the API server does not serve makes the source wait, not
// fail: the collector gets ready, the served resource's objects are
// published, and nothing of the other is.
func TestUnstructuredResourceNotServed(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	create(t, ns, object{res: vmis, kind: "VirtualMachineInstance", name: "vm", annotations: ann("hostname", "vm.example.org", "target", "192.0.2.1")})
	missing := res("widgets.v1.nowhere.example.org", "nowhere.example.org", "v1", "widgets")
	collectortest.StartCollector(t, config(ns, vmis, missing))
	expect(t, subject(ns, ns, vmis, "vm"), list(ep("vm.example.org", "A", "192.0.2.1")))
}

// Bad input is reported on the object (Event, metric) and the rest is
// published; an object left with bad input only keeps nothing it never
// had, and takes nothing away.
func TestUnstructuredInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	beforeTmpl := collectortest.InvalidInput(t, "unstructured", "TargetTemplateFailed")
	create(t, ns, object{res: vmis, kind: "VirtualMachineInstance", name: "bad",
		annotations: ann("hostname", "ok.example.org,bad..example.org", "target", "192.0.2.1", "ttl", "abc")})
	// No status yet: the target template prints a field the VMI does not have.
	create(t, ns, object{res: vmis, kind: "VirtualMachineInstance", name: "pending", fields: map[string]any{"spec": map[string]any{}}})
	cfg := config(ns, vmis)
	templates("{{.Name}}.vms.example.org", "{{.Spec.address}}", "", false)(&cfg)
	collectortest.StartCollector(t, cfg)
	expect(t, subject(ns, ns, vmis, "bad"), list(ep("ok.example.org", "A", "192.0.2.1")))
	collectortest.ExpectEvents(t, ns, "VirtualMachineInstance", "bad", `ttl "abc"`, "bad..example.org")
	if evs := collectortest.WaitObjectEvents(t, ns, "VirtualMachineInstance", "pending", 1); !strings.Contains(evs, "TargetTemplateFailed: --target-template") ||
		!strings.Contains(evs, "does not have") {
		t.Errorf("events of the pending VMI:\n%s", evs)
	}
	expect(t, subject(ns, ns, vmis, "pending"), nil)
	if got := collectortest.InvalidInput(t, "unstructured", "TargetTemplateFailed") - beforeTmpl; got < 1 {
		t.Errorf("TargetTemplateFailed metric grew by %v, want >= 1", got)
	}
}

// Flags that cannot work are refused at start, naming the flag.
func TestUnstructuredBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*collector.Config)
		want string
	}{
		{"no resource", func(c *collector.Config) { c.Unstructured.Resources = nil }, "no --unstructured-resource"},
		{"no version", func(c *collector.Config) { c.Unstructured.Resources = []string{"justname"} }, "--unstructured-resource \"justname\""},
		{"bad resource name", func(c *collector.Config) { c.Unstructured.Resources = []string{"Widgets.v1.example.org"} }, "--unstructured-resource"},
		{"bad target template", func(c *collector.Config) { c.TargetTemplate = "{{.Name" }, "--target-template"},
		{"bad pair template", func(c *collector.Config) { c.FQDNTargetTemplate = "{{.Name" }, "--fqdn-target-template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config("bad-flags", vmis)
			cfg.RESTConfig = collectortest.Cluster.Config
			tc.edit(&cfg)
			_, err := collector.New(cfg, collectortest.Logger(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
