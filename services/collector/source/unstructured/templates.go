package unstructured

import (
	"fmt"
	"maps"
	"strings"
	"text/template"
	"unicode"

	metaunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/services/collector/source"
)

// templates are the Go templates run over an object: the collector's
// --fqdn-template and this source's --target-template and
// --fqdn-target-template; nil when not given.
type templates struct {
	fqdn, target, fqdnTarget *template.Template
}

func parseTemplates(fqdn *template.Template, f Flags) (templates, error) {
	t := templates{}
	var err error
	if fqdn != nil {
		if t.fqdn, err = fqdn.Clone(); err != nil {
			return t, err
		}
		t.fqdn = lenient(t.fqdn)
	}
	if t.target, err = parseTemplate("--target-template", f.TargetTemplate); err != nil {
		return t, err
	}
	if t.fqdnTarget, err = parseTemplate("--fqdn-target-template", f.FQDNTargetTemplate); err != nil {
		return t, err
	}
	return t, nil
}

func parseTemplate(flagName, s string) (*template.Template, error) {
	t, err := source.ParseFQDNTemplate(s)
	if err != nil {
		// ParseFQDNTemplate names --fqdn-template; say which flag it was.
		return nil, &flagError{flag: flagName, err: err}
	}
	if t == nil {
		return nil, nil
	}
	return lenient(t), nil
}

// lenient lets a template test a field the object may not have
// ({{if .Status.interfaces}}), as ExternalDNS' templates over
// unstructured objects do: an object's fields vary with its kind and
// its life, unlike a typed object's. A missing field printed renders
// noValue, which run reports.
func lenient(t *template.Template) *template.Template { return t.Option("missingkey=default") }

// noValue is what text/template prints for a missing map key.
const noValue = "<no value>"

// run executes t over v and returns the comma-separated items it made;
// a failure, or an item that printed a missing field, is reported under
// field and reason.
func run(t *template.Template, v view, in *source.Inputs, field, reason string) []string {
	items, err := source.ExecFQDNTemplate(t, v)
	if err != nil {
		in.Problem(reason, field, err)
		return nil
	}
	out := items[:0]
	for _, it := range items {
		if strings.Contains(it, noValue) {
			in.Problem(reason, field, fmt.Errorf("%q: the template printed a field the object does not have (yet)", it))
			continue
		}
		out = append(out, it)
	}
	return out
}

type flagError struct {
	flag string
	err  error
}

func (e *flagError) Error() string {
	return e.flag + ": " + strings.TrimPrefix(e.err.Error(), "--fqdn-template: ")
}

func (e *flagError) Unwrap() error { return e.err }

// given reports whether a template is given: only then do templates play.
func (t templates) given() bool { return t.fqdn != nil || t.target != nil || t.fqdnTarget != nil }

// view is what the templates see of an object, as in ExternalDNS:
// {{.Name}}, {{.Namespace}}, {{.Kind}}, {{.APIVersion}}, {{.Labels}} and
// {{.Annotations}} like a typed object's, the raw sections {{.Metadata}},
// {{.Spec}} and {{.Status}}, and the whole object as {{.Object}}.
type view struct {
	Name, Namespace, Kind, APIVersion string
	Labels, Annotations               map[string]string
	Metadata, Spec, Status, Object    map[string]any
}

func viewOf(u *metaunstructured.Unstructured) view {
	v := view{Name: u.GetName(), Namespace: u.GetNamespace(), Kind: u.GetKind(), APIVersion: u.GetAPIVersion(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations(), Object: u.Object}
	v.Metadata, _ = u.Object["metadata"].(map[string]any)
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		v.Spec = withGoNames(spec)
	}
	if status, ok := u.Object["status"].(map[string]any); ok {
		v.Status = withGoNames(status)
	}
	return v
}

// withGoNames lets a template name a top-level JSON field of spec or
// status by its Go field name too ({{.Spec.DNSNames}} for dnsNames), as
// templates written for typed objects do. Only one level deep, as in
// ExternalDNS: deeper, ranging over a map would see every key twice.
func withGoNames(m map[string]any) map[string]any {
	out := maps.Clone(m)
	for k, v := range m {
		g := goName(k)
		if _, taken := m[g]; !taken {
			out[g] = v
		}
	}
	return out
}

// initialisms are the leading words Go field names spell in capitals
// (DNSNames, URL), those ExternalDNS knows.
var initialisms = map[string]bool{
	"acl": true, "api": true, "arn": true, "ca": true, "cidr": true, "cpu": true, "crd": true, "db": true,
	"dns": true, "http": true, "https": true, "id": true, "ip": true, "json": true, "jwk": true, "jwt": true,
	"os": true, "pem": true, "rbac": true, "sql": true, "ssl": true, "tcp": true, "tls": true, "ttl": true,
	"udp": true, "uid": true, "uuid": true, "uri": true, "url": true, "vm": true, "xml": true, "yaml": true,
}

// goName is the Go field name of a lowerCamelCase JSON key: hostname ->
// Hostname, dnsNames -> DNSNames, url -> URL.
func goName(k string) string {
	r := []rune(k)
	if len(r) == 0 || unicode.IsUpper(r[0]) {
		return k
	}
	end := 0
	for end < len(r) && !unicode.IsUpper(r[end]) {
		end++
	}
	first := string(r[:end])
	if initialisms[strings.ToLower(first)] {
		return strings.ToUpper(first) + string(r[end:])
	}
	return string(unicode.ToUpper(r[0])) + string(r[1:])
}
