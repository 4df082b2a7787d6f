package source

import (
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// The annotation keys (without prefix, see Annotation) most sources share.
const (
	AnnotationHostname         = "hostname"
	AnnotationInternalHostname = "internal-hostname"
	AnnotationTarget           = "target"
	AnnotationTTL              = "ttl"
	AnnotationController       = "controller"
	AnnotationSetIdentifier    = "set-identifier"
)

// ControllerValue is the only controller annotation value that does not
// make a source skip an object, as in ExternalDNS.
const ControllerValue = "dns-controller"

// Event reasons (also the invalid-input metric's reason label) most
// sources share.
const (
	ReasonInvalidAnnotation  = "InvalidAnnotation"
	ReasonInvalidHostname    = "InvalidHostname"
	ReasonFQDNTemplateFailed = "FQDNTemplateFailed"
)

// Controlled reports whether an object's controller annotation, if any,
// lets the sources use it.
func Controlled(annotations map[string]string) bool {
	v, _, ok := Annotation(annotations, AnnotationController)
	return !ok || v == ControllerValue
}

// Inputs reads the annotations of one object the way every source does:
// invalid entries are skipped and collected as Problems on the object.
type Inputs struct {
	Object      runtime.Object
	Annotations map[string]string
	Problems    []error
}

// NewInputs returns the Inputs of obj.
func NewInputs(obj runtime.Object) *Inputs {
	in := &Inputs{Object: obj}
	if m, err := meta.Accessor(obj); err == nil {
		in.Annotations = m.GetAnnotations()
	}
	return in
}

// Problem records a piece of bad input of the object.
func (in *Inputs) Problem(reason, field string, err error) {
	in.Problems = append(in.Problems, &Problem{Object: in.Object, Reason: reason, Field: field, Err: err})
}

// TTL is the ttl annotation in seconds; 0 when absent or invalid.
func (in *Inputs) TTL() int64 {
	v, k, ok := Annotation(in.Annotations, AnnotationTTL)
	if !ok {
		return 0
	}
	ttl, err := ParseTTL(v)
	if err != nil {
		in.Problem(ReasonInvalidAnnotation, k, err)
		return 0
	}
	return ttl
}

// SetIdentifier is the set-identifier annotation, trimmed.
func (in *Inputs) SetIdentifier() string {
	v, _, _ := Annotation(in.Annotations, AnnotationSetIdentifier)
	return strings.TrimSpace(v)
}

// Targets are the valid entries of the target annotation.
func (in *Inputs) Targets() []string {
	v, k, ok := Annotation(in.Annotations, AnnotationTarget)
	if !ok {
		return nil
	}
	var out []string
	for _, t := range SplitList(v) {
		if err := ValidateTarget(t); err != nil {
			in.Problem(ReasonInvalidAnnotation, k, err)
			continue
		}
		out = append(out, t)
	}
	return out
}

// Hostnames are the valid names of a hostname-like annotation (key
// without prefix); wildcards allowed.
func (in *Inputs) Hostnames(key string) []string {
	v, k, ok := Annotation(in.Annotations, key)
	if !ok {
		return nil
	}
	return in.ValidHostnames(SplitList(v), k, ReasonInvalidAnnotation)
}

// ValidHostnames keeps the valid names (wildcards allowed) and reports the
// others under field and reason.
func (in *Inputs) ValidHostnames(names []string, field, reason string) []string {
	var out []string
	for _, h := range names {
		if err := ValidateHostname(h, true); err != nil {
			in.Problem(reason, field, err)
			continue
		}
		out = append(out, h)
	}
	return out
}

// TemplateNames runs --fqdn-template over the object and keeps the valid
// names; nil template: none.
func (in *Inputs) TemplateNames(t *template.Template) []string {
	if t == nil {
		return nil
	}
	names, err := ExecFQDNTemplate(t, in.Object)
	if err != nil {
		in.Problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
	}
	return in.ValidHostnames(names, "--fqdn-template", ReasonFQDNTemplateFailed)
}
