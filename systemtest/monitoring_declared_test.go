package systemtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAlertsOfDeclaredProviders: promtool evaluates the shipped rules
// over series written here as the stages name them. A DNSProvider object
// not ready fires the teams' own alert, not the platform's
// ZonestreamApplierNotReady; and once the provider declared by flags is
// not ready, the platform's fires though a team's applier is ready (it
// must not mask it, as a max over every provider did).
func TestAlertsOfDeclaredProviders(t *testing.T) {
	promtool := goTool(t, "ZS_PROMTOOL", "promtool")
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	const labels = `namespace="zs", job="zonestream"`
	test := strings.NewReplacer("RULES", rules, "LABELS", labels).Replace(`rule_files: [RULES]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'zonestream_applier_ready{LABELS, provider="rfc2136"}'
        values: '1x20 0x20'
      - series: 'zonestream_applier_ready{LABELS, provider="team-a/dns"}'
        values: '1x40'
      - series: 'zonestream_dnsproviders{LABELS, ready="false"}'
        values: '1x40'
      - series: 'zonestream_dnsproviders{LABELS, ready="true"}'
        values: '2x40'
    alert_rule_test:
      - eval_time: 20m
        alertname: ZonestreamApplierNotReady
        exp_alerts: []
      - eval_time: 20m
        alertname: ZonestreamDeclaredProvidersNotReady
        exp_alerts:
          - exp_labels: {severity: info, namespace: zs, job: zonestream}
            exp_annotations:
              summary: DNSProvider objects are not ready.
              description: Some DNSProvider or ClusterDNSProvider objects have not been ready for 15 minutes (zonestream_dnsproviders{ready="false"}); their teams' names wait. ` + "`kubectl get dnsproviders -A`" + ` and ` + "`kubectl get clusterdnsproviders`" + ` show which and why (a Secret missing or refused, credentials failing); other providers are not affected.
      - eval_time: 35m
        alertname: ZonestreamApplierNotReady
        exp_alerts:
          - exp_labels: {severity: warning, namespace: zs, job: zonestream}
            exp_annotations:
              summary: No applier is ready.
              description: The applier has not completed a full listing of its provider, or the provider failed 5 times in a row, for 10 minutes (zonestream_applier_ready 0). Providers declared by DNSProvider objects (their provider label holds a "/") have their own alert.
`)
	file := filepath.Join(t.TempDir(), "declared.yaml")
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
