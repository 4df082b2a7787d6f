package source

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func templatePod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Status:     corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}}},
	}
}

// The pairs of --fqdn-target-template: split at the first ':', trimmed,
// trailing dots dropped; empty halves skipped silently (a field not yet
// filled), bad items reported.
func TestTemplatePairs(t *testing.T) {
	cases := []struct {
		name, tmpl string
		want       []TemplatePair
		problems   []string
	}{
		{name: "A and CNAME", tmpl: "{{.Name}}.example.com:1.2.3.4, {{.Name}}.cname.example.com.:lb.example.com.",
			want: []TemplatePair{{"web.example.com", "1.2.3.4"}, {"web.cname.example.com", "lb.example.com"}}},
		{name: "IPv6 target keeps its colons", tmpl: "{{.Name}}.example.com:2001:db8::1",
			want: []TemplatePair{{"web.example.com", "2001:db8::1"}}},
		{name: "one pair per Pod IP, trailing comma", tmpl: "{{$n := .Name}}{{range .Status.PodIPs}}{{$n}}.{{$.Namespace}}.example.com:{{.IP}},{{end}}",
			want: []TemplatePair{{"web.shop.example.com", "10.0.0.5"}, {"web.shop.example.com", "fd00::5"}}},
		{name: "empty target or name skipped without a word", tmpl: "{{.Name}}.example.com:{{.Status.HostIP}},:1.2.3.4,ok.example.com:1.2.3.4",
			want: []TemplatePair{{"ok.example.com", "1.2.3.4"}}},
		{name: "wildcard name", tmpl: "*.{{.Name}}.example.com:1.2.3.4", want: []TemplatePair{{"*.web.example.com", "1.2.3.4"}}},
		{name: "no colon reported", tmpl: "{{.Name}}.example.com", problems: []string{`"web.example.com" is not name:target`}},
		{name: "bad name and bad target reported, the good kept", tmpl: "bad..example.com:1.2.3.4,x.example.com:300.1.1.1,y.example.com:1.2.3.4",
			want: []TemplatePair{{"y.example.com", "1.2.3.4"}}, problems: []string{"bad..example.com", `target "300.1.1.1"`}},
		{name: "failing template reported", tmpl: "{{.Spec.NoSuchField}}:1.2.3.4", problems: []string{"NoSuchField"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(FlagFQDNTargetTemplate, tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			in := NewInputs(templatePod())
			got := in.TemplatePairs(tmpl)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pairs %v, want %v", got, tc.want)
			}
			checkProblems(t, in, FlagFQDNTargetTemplate, tc.problems)
		})
	}
}

// The targets of --target-template: valid addresses and names, the others
// reported.
func TestTemplateTargets(t *testing.T) {
	tmpl, err := ParseTemplate(FlagTargetTemplate, "lb.{{.Namespace}}.example.com., 192.0.2.1, 300.1.1.1")
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputs(templatePod())
	if got, want := in.TemplateTargets(tmpl), []string{"lb.shop.example.com", "192.0.2.1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
	checkProblems(t, in, FlagTargetTemplate, []string{`target "300.1.1.1"`})
	if got := in.TemplateTargets(nil); got != nil {
		t.Errorf("no template gave %v", got)
	}
}

// AddTemplatePairs fills a set only while it is empty, unless combining.
func TestAddTemplatePairs(t *testing.T) {
	tmpl, err := ParseTemplate(FlagFQDNTargetTemplate, "{{.Name}}.example.com:1.2.3.4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		filled, combine bool
		want            int
	}{
		{"empty set", false, false, 1},
		{"filled set", true, false, 0},
		{"filled set, combine", true, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var set EndpointSet
			if tc.filled {
				set.Add("own.example.com", "192.0.2.9")
			}
			n := NewInputs(templatePod()).AddTemplatePairs(SharedOptions{FQDNTargetTemplate: tmpl, CombineFQDNAnnotation: tc.combine}, &set)
			if n != tc.want {
				t.Errorf("added %d, want %d", n, tc.want)
			}
		})
	}
}

func TestParseTemplate(t *testing.T) {
	if tmpl, err := ParseTemplate(FlagTargetTemplate, "  "); tmpl != nil || err != nil {
		t.Errorf("blank: %v, %v", tmpl, err)
	}
	if _, err := ParseTemplate(FlagFQDNTargetTemplate, "{{.Name"); err == nil || !strings.Contains(err.Error(), FlagFQDNTargetTemplate) {
		t.Errorf("bad template: %v, want an error naming the flag", err)
	}
}

func checkProblems(t *testing.T, in *Inputs, field string, wants []string) {
	t.Helper()
	if len(in.Problems) != len(wants) {
		t.Fatalf("problems %v, want %d", in.Problems, len(wants))
	}
	for i, want := range wants {
		p, ok := in.Problems[i].(*Problem)
		if !ok || p.Reason != ReasonTargetTemplateFailed || p.Field != field || !strings.Contains(p.Error(), want) {
			t.Errorf("problem %v, want %s %s containing %q", in.Problems[i], ReasonTargetTemplateFailed, field, want)
		}
	}
}
