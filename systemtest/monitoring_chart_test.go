package systemtest

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
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
	if port["targetPort"] != "http" {
		t.Errorf("metrics Service targets %v, want the stages' port named http", port["targetPort"])
	}
	selects := sm["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	labels := kinds["Service"]["metadata"].(map[string]any)["labels"].(map[string]any)
	for k, v := range selects {
		if labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the metrics Service has %v", k, v, labels[k])
		}
	}
	// The Service's selector picks the stages' pods.
	stages := command(t, helm, append(base, "--show-only", "templates/workloads.yaml")...)
	for k, v := range svc["selector"].(map[string]any) {
		if !strings.Contains(stages, k+": "+v.(string)) {
			t.Errorf("the metrics Service selects %s=%v, which no stage's pod has", k, v)
		}
	}
}

// TestMonitoringReadsMetricsThatExist: every metric the shipped rules and
// dashboard read is one a stage registers (a "Name:" in the stages'
// sources), so that a renamed metric cannot leave an alert silent or a
// panel empty.
func TestMonitoringReadsMetricsThatExist(t *testing.T) {
	registered := registeredMetrics(t)
	for _, file := range []string{rulesFile, "../deploy/monitoring/zonestream-dashboard.json"} {
		text := readFile(t, file)
		if strings.HasSuffix(file, ".json") {
			var d map[string]any
			if err := json.Unmarshal([]byte(text), &d); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
		n := 0
		for _, m := range metricName.FindAllString(text, -1) {
			base := strings.TrimSuffix(m, "_bucket")
			if !registered[base] {
				t.Errorf("%s reads %s, which no stage registers", file, m)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s reads no metric", file)
		}
	}
}

// TestEveryMetricIsDocumented: docs/operations/metrics.md names every
// metric a stage registers.
func TestEveryMetricIsDocumented(t *testing.T) {
	doc := readFile(t, "../docs/operations/metrics.md")
	for m := range registeredMetrics(t) {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/operations/metrics.md does not document %s", m)
		}
	}
}

// registeredMetrics are the metrics the stages register: each "Name:" of
// theirs that is external_dns_ or zonestream_.
func registeredMetrics(t *testing.T) map[string]bool {
	registered := map[string]bool{}
	name := regexp.MustCompile(`Name:\s+"((?:external_dns|zonestream)_[a-z0-9_]+)"`)
	for _, dir := range []string{"../services", "../stage"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			for _, m := range name.FindAllStringSubmatch(readFile(t, path), -1) {
				registered[m[1]] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return registered
}
