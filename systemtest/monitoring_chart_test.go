package systemtest

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestChartRulesAreTheShippedRules: the chart's PrometheusRule renders the
// very rules of deploy/monitoring/zonestream-rules.yaml (the ones
// TestMonitoringRulesFireOnARealOutage sees fire), and its ServiceMonitor
// scrapes the stages' metrics port through a Service that selects them;
// with both off (the default) neither renders.
func TestChartRulesAreTheShippedRules(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	base := []string{"template", "zs", chart, "--set", "domainFilters={example.org}"}
	if out := command(t, helm, base...); strings.Contains(out, "kind: PrometheusRule") || strings.Contains(out, "kind: ServiceMonitor") {
		t.Error("PrometheusRule or ServiceMonitor rendered though not enabled")
	}
	out := command(t, helm, append(base, "--set", "prometheusRule.enabled=true", "--set", "serviceMonitor.enabled=true",
		"--set", "serviceMonitor.additionalLabels.release=prometheus")...)
	var shipped, rendered map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, rulesFile)), &shipped); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]map[string]any{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if k, ok := o["kind"].(string); ok {
			if k == "Service" && !strings.HasSuffix(o["metadata"].(map[string]any)["name"].(string), "-metrics") {
				continue
			}
			kinds[k] = o
		}
	}
	if kinds["PrometheusRule"] == nil || kinds["ServiceMonitor"] == nil || kinds["Service"] == nil {
		t.Fatalf("rendered no PrometheusRule, ServiceMonitor or metrics Service:\n%s", out)
	}
	rendered = kinds["PrometheusRule"]["spec"].(map[string]any)
	if !reflect.DeepEqual(rendered["groups"], shipped["groups"]) {
		t.Errorf("the chart's rules differ from %s:\n%v\nwant\n%v", rulesFile, rendered["groups"], shipped["groups"])
	}
	sm := kinds["ServiceMonitor"]
	if got := sm["metadata"].(map[string]any)["labels"].(map[string]any)["release"]; got != "prometheus" {
		t.Errorf("ServiceMonitor label release %v, want prometheus", got)
	}
	svc := kinds["Service"]["spec"].(map[string]any)
	port := svc["ports"].([]any)[0].(map[string]any)
	if port["targetPort"] != "metrics" {
		t.Errorf("metrics Service targets %v, want the stages' port named metrics", port["targetPort"])
	}
	selects := sm["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	labels := kinds["Service"]["metadata"].(map[string]any)["labels"].(map[string]any)
	for k, v := range selects {
		if labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the metrics Service has %v", k, v, labels[k])
		}
	}
	// The Service's selector picks the stages' pods.
	stages := command(t, helm, append(base, "--show-only", "templates/stages.yaml")...)
	for k, v := range svc["selector"].(map[string]any) {
		if !strings.Contains(stages, k+": "+v.(string)) {
			t.Errorf("the metrics Service selects %s=%v, which no stage's pod has", k, v)
		}
	}
}
