package systemtest

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestHelmChartSourceRBAC: the collector's ClusterRole grants get, list
// and watch on an ingress controller's resources exactly when its source
// is in sources, as ExternalDNS' chart does.
func TestHelmChartSourceRBAC(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	grants := map[string][][2]string{ // source: {apiGroup, resource}
		"ambassador-host":    {{"getambassador.io", "hosts"}},
		"f5-virtualserver":   {{"cis.f5.com", "virtualservers"}, {"cis.f5.com", "transportservers"}},
		"f5-transportserver": {{"cis.f5.com", "virtualservers"}, {"cis.f5.com", "transportservers"}},
		"skipper-routegroup": {{"zalando.org", "routegroups"}},
		"gloo-proxy":         {{"gloo.solo.io", "proxies"}, {"gateway.solo.io", "virtualservices"}, {"gateway.solo.io", "gateways"}},
	}
	rules := func(sources string) []rbacv1.PolicyRule {
		out := command(t, helm, "template", "zs", chart, "--set", "sources={"+sources+"}", "-s", "templates/rbac.yaml")
		for _, doc := range strings.Split(out, "\n---\n") {
			var role rbacv1.ClusterRole
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatalf("%v in\n%s", err, doc)
			}
			if role.Kind == "ClusterRole" {
				return role.Rules
			}
		}
		t.Fatalf("sources={%s}: no ClusterRole rendered", sources)
		return nil
	}
	granted := func(rules []rbacv1.PolicyRule, group, resource string) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
				slices.Contains(r.Verbs, "get") && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
				return true
			}
		}
		return false
	}
	none := rules("service,ingress")
	for src, want := range grants {
		with := rules("service," + src)
		for _, g := range want {
			if !granted(with, g[0], g[1]) {
				t.Errorf("sources={service,%s}: no get/list/watch on %s.%s", src, g[1], g[0])
			}
			if granted(none, g[0], g[1]) {
				t.Errorf("sources={service,ingress}: %s.%s granted without %s", g[1], g[0], src)
			}
		}
	}
}
