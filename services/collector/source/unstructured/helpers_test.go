package unstructured_test

import (
	"fmt"
	"slices"
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

// The resources of the tests: --unstructured-resource value, and where
// the objects are created.
var (
	vmis         = res("virtualmachineinstances.v1.kubevirt.io", "kubevirt.io", "v1", "virtualmachineinstances")
	cattleNodes  = res("nodes.v3.management.cattle.io", "management.cattle.io", "v3", "nodes")
	replGroups   = res("replicationgroups.v1.elasticache.upbound.io", "elasticache.upbound.io", "v1", "replicationgroups")
	machines     = res("machines.v1beta1.cluster.x-k8s.io", "cluster.x-k8s.io", "v1beta1", "machines")
	rdsInstances = res("rdsinstances.v1alpha1.rds.aws.crossplane.io", "rds.aws.crossplane.io", "v1alpha1", "rdsinstances")
	proxies      = res("proxyservices.v1beta1.proxyconfigs.acme.corp", "proxyconfigs.acme.corp", "v1beta1", "proxyservices")
	apps         = res("applications.v1alpha1.argoproj.io", "argoproj.io", "v1alpha1", "applications")
	tgbs         = res("targetgroupbindings.v1beta1.elbv2.k8s.aws", "elbv2.k8s.aws", "v1beta1", "targetgroupbindings")
	sites        = res("sites.v1alpha1.teams.example.org", "teams.example.org", "v1alpha1", "sites")
	configMaps   = res("configmaps.v1", "", "v1", "configmaps")
	epSlices     = res("endpointslices.v1.discovery.k8s.io", "discovery.k8s.io", "v1", "endpointslices")
)

type resource struct {
	flag string
	gvr  schema.GroupVersionResource
}

func res(flag, group, version, plural string) resource {
	return resource{flag, schema.GroupVersionResource{Group: group, Version: version, Resource: plural}}
}

// keyName is the object's name in its subject: "<resource>.<group>/<name>".
func (r resource) keyName(name string) string {
	return r.gvr.GroupResource().String() + "/" + name
}

func config(ns string, resources ...resource) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"unstructured"}}
	for _, r := range resources {
		cfg.Unstructured.Resources = append(cfg.Unstructured.Resources, r.flag)
	}
	cfg.Unstructured.PollInterval = 100 * time.Millisecond
	return cfg
}

// object is one object to create: its resource, kind, name, metadata,
// top-level fields (spec, data, ...) and the status written through the
// status subresource; want is what it must publish (nil: nothing).
type object struct {
	res         resource
	kind        string
	name        string
	annotations map[string]string
	labels      map[string]string
	fields      map[string]any
	status      map[string]any
	want        []events.Endpoint
}

func (o object) unstructured() *unstructured.Unstructured {
	apiVersion := o.res.gvr.GroupVersion().String()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": o.kind,
		"metadata": map[string]any{"name": o.name}}}
	for k, v := range o.fields {
		u.Object[k] = v
	}
	u.SetAnnotations(o.annotations)
	u.SetLabels(o.labels)
	return u
}

// create creates o in ns (cluster-scoped: ns is ""), then its status.
func create(t *testing.T, ns string, o object) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	u := o.unstructured()
	u.SetNamespace(ns)
	client := dc.Resource(o.res.gvr).Namespace(ns)
	got, err := client.Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", o.kind, o.name, err)
	}
	if o.status == nil {
		return
	}
	got.Object["status"] = o.status
	if _, err := client.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("%s %s: status: %v", o.kind, o.name, err)
	}
}

func subject(cluster, ns string, r resource, name string) string {
	return events.SourceSubject(cluster, "unstructured", ns, r.keyName(name))
}

// full renders endpoints with what collectortest.Render leaves out: set
// identifier and provider-specific properties.
func full(eps []events.Endpoint) string {
	events.SortEndpoints(eps)
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintf(&b, "%s %s ttl=%d %v set=%q %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets, e.SetIdentifier, e.ProviderSpecific)
	}
	return b.String()
}

// expect checks that subj's last state is exactly want (compared in
// full), or that nothing was published for an empty want. The collector
// is ready: its first pass has computed every object.
func expect(t *testing.T, subj string, want []events.Endpoint) {
	t.Helper()
	if len(want) == 0 {
		if s, ok := collectortest.LastState(t, subj); ok {
			t.Fatalf("%s: published %v, want nothing", subj, full(s.Endpoints))
		}
		return
	}
	got := collectortest.WaitState(t, subj, slices.Clone(want))
	if full(got.Endpoints) != full(want) {
		t.Fatalf("%s: published\n%swant\n%s", subj, full(got.Endpoints), full(want))
	}
}

func ep(name, typ string, targets ...string) events.Endpoint {
	return collectortest.EP(name, typ, targets...)
}

func ttl(e events.Endpoint, seconds int64) events.Endpoint {
	e.RecordTTL = seconds
	return e
}

func list(eps ...events.Endpoint) []events.Endpoint { return eps }
