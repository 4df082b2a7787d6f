package pod_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --fqdn-target-template: name:target pairs from every Pod, when its
// annotations gave no record or with --combine-fqdn-annotation, before
// --fqdn-template's names (ExternalDNS v0.23's pod_fqdn_test.go cases).
func TestPodRuleFQDNTargetTemplate(t *testing.T) {
	pairs := func(tmpl string, combine bool) func(*collector.Config) {
		return func(c *collector.Config) { c.FQDNTargetTemplate, c.CombineFQDNAnnotation = tmpl, combine }
	}
	plain := testPod{name: "p", ips: []string{"10.0.0.5"}}
	annotated := testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("internal-hostname", "annotated.example.com")}
	runPodRules(t, []podCase{
		{name: "A record when no annotation-derived endpoints", cfg: pairs("{{.Name}}.example.com:1.2.3.4", false), pod: plain,
			want: collectortest.Fixed(collectortest.EP("p.example.com", "A", "1.2.3.4"))},
		{name: "CNAME for a hostname target", cfg: pairs("{{.Name}}.example.com:lb.example.com", false), pod: plain,
			want: collectortest.Fixed(collectortest.EP("p.example.com", "CNAME", "lb.example.com"))},
		{name: "with combine, beside the annotation-derived", cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", true), pod: annotated,
			want: collectortest.Fixed(collectortest.EP("annotated.example.com", "A", "10.0.0.5"), collectortest.EP("p.tmpl.example.com", "CNAME", "lb.example.com"))},
		{name: "without combine, ignored when annotation-derived exist", cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", false), pod: annotated,
			want: collectortest.Fixed(collectortest.EP("annotated.example.com", "A", "10.0.0.5"))},
		{name: ".Kind", cfg: pairs("{{.Kind | toLower}}.{{.Name}}.example.com:1.2.3.4", false), pod: plain,
			want: collectortest.Fixed(collectortest.EP("pod.p.example.com", "A", "1.2.3.4"))},
		{name: "a pair without ':' is skipped", cfg: pairs("{{.Name}}.example.com", false), pod: plain},
		{name: ".APIVersion", cfg: pairs("{{.Name}}.{{.APIVersion}}.example.com:1.2.3.4", false), pod: plain,
			want: collectortest.Fixed(collectortest.EP("p.v1.example.com", "A", "1.2.3.4"))},
		{name: "the Pod's own IPs, one pair each", cfg: pairs("{{$n := .Name}}{{range .Status.PodIPs}}{{$n}}.ips.example.com:{{.IP}},{{end}}", false),
			pod:  testPod{name: "p", ips: []string{"10.0.0.5", "fd00::5"}},
			want: collectortest.Fixed(collectortest.EP("p.ips.example.com", "A", "10.0.0.5"), collectortest.EP("p.ips.example.com", "AAAA", "fd00::5"))},
		{name: "pairs win over --fqdn-template without combine",
			cfg: func(c *collector.Config) {
				pairs("{{.Name}}.pair.example.com:1.2.3.4", false)(c)
				c.FQDNTemplate = "{{.Name}}.tmpl.example.com"
			},
			pod: plain, want: collectortest.Fixed(collectortest.EP("p.pair.example.com", "A", "1.2.3.4"))},
	})
}

// A bad pair is reported on the Pod (Event, metric); the valid pairs are
// published.
func TestPodFQDNTargetTemplateBadPairReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "pod", "TargetTemplateFailed")
	createTestPod(t, ns, testPod{name: "p", ips: []string{"10.0.0.5"}})
	cfg := podConfig(ns)
	cfg.FQDNTargetTemplate = "{{.Name}}.ok.example.com:1.2.3.4,{{.Name}}.nocolon.example.com,bad..example.com:1.2.3.4,{{.Name}}.t.example.com:300.1.1.1"
	collectortest.StartCollector(t, cfg)
	collectortest.WaitState(t, podSubject(ns, ns, "p"), []events.Endpoint{collectortest.EP("p.ok.example.com", "A", "1.2.3.4")})
	collectortest.ExpectEvents(t, ns, "Pod", "p", `"p.nocolon.example.com" is not name:target`, `bad..example.com`, `target "300.1.1.1"`)
	if got := collectortest.InvalidInput(t, "pod", "TargetTemplateFailed") - before; got < 3 {
		t.Errorf("invalid input metric grew by %v, want >= 3", got)
	}
}
