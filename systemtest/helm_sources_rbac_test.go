package systemtest

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestHelmSourceRBAC: the chart lets the collector read the resources of
// another project's source only when that source runs, as ExternalDNS'
// chart does.
func TestHelmSourceRBAC(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	for _, tc := range []struct {
		source string
		group  string
		kinds  []string
	}{
		{"openshift-route", "route.openshift.io", []string{"routes"}},
		{"contour-httpproxy", "projectcontour.io", []string{"httpproxies"}},
		{"kong-tcpingress", "configuration.konghq.com", []string{"tcpingresses"}},
		{"traefik-proxy", "traefik.io", []string{"ingressroutes", "ingressroutetcps", "ingressrouteudps"}},
		{"traefik-proxy", "traefik.containo.us", []string{"ingressroutes", "ingressroutetcps", "ingressrouteudps"}},
	} {
		t.Run(tc.source+" "+tc.group, func(t *testing.T) {
			with := collectorRules(t, command(t, helm, "template", "zs", chart, "--set", "sources={service,"+tc.source+"}"))
			for _, k := range tc.kinds {
				if !grants(with, tc.group, k) {
					t.Errorf("sources holds %s: the collector's ClusterRole does not grant get, list, watch on %s.%s:\n%v", tc.source, k, tc.group, with)
				}
			}
			without := collectorRules(t, command(t, helm, "template", "zs", chart))
			for _, k := range tc.kinds {
				if grants(without, tc.group, k) {
					t.Errorf("sources lacks %s: the collector's ClusterRole still grants %s.%s", tc.source, k, tc.group)
				}
			}
		})
	}
}

// TestHelmUnstructuredRBAC: with the unstructured source, the chart
// passes each of unstructuredResources as --unstructured-resource and
// lets the collector read it (core group included); without the source,
// neither.
func TestHelmUnstructuredRBAC(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	set := []string{"--set", "unstructuredResources={virtualmachineinstances.v1.kubevirt.io,configmaps.v1}"}
	with := command(t, helm, append([]string{"template", "zs", chart, "--set", "sources={service,unstructured}"}, set...)...)
	rules := collectorRules(t, with)
	for _, gr := range [][2]string{{"kubevirt.io", "virtualmachineinstances"}, {"", "configmaps"}} {
		if !grants(rules, gr[0], gr[1]) {
			t.Errorf("the collector's ClusterRole does not grant get, list, watch on %s.%s:\n%v", gr[1], gr[0], rules)
		}
	}
	for _, arg := range []string{"--unstructured-resource=virtualmachineinstances.v1.kubevirt.io", "--unstructured-resource=configmaps.v1"} {
		if !strings.Contains(with, arg) {
			t.Errorf("the release lacks %s", arg)
		}
	}
	without := command(t, helm, append([]string{"template", "zs", chart}, set...)...)
	if grants(collectorRules(t, without), "kubevirt.io", "virtualmachineinstances") || strings.Contains(without, "--unstructured-resource") {
		t.Error("sources lacks unstructured: the release still reads its resources")
	}
}

// collectorRules are the rules of the collector's ClusterRole in a
// rendered release.
func collectorRules(t *testing.T, rendered string) []rbacv1.PolicyRule {
	t.Helper()
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if r.Kind == "ClusterRole" && strings.HasSuffix(r.Name, "-collector") {
			return r.Rules
		}
	}
	t.Fatalf("no collector ClusterRole in the release")
	return nil
}

// grants reports whether rules let the collector get, list and watch
// resource of group.
func grants(rules []rbacv1.PolicyRule, group, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			slices.Contains(r.Verbs, "get") && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
			return true
		}
	}
	return false
}
