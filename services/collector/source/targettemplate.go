package source

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
)

// ExternalDNS v0.23's --target-template and --fqdn-target-template: Go
// templates over the object, parsed and run like --fqdn-template. The first
// gives the targets of the --fqdn-template names in the sources whose
// objects carry no target of their own for them; the second gives
// name:target pairs, each a record of its own.

// ReasonTargetTemplateFailed is the event reason (and the invalid-input
// metric's reason label) of a target template that fails or gives an
// invalid name or target.
const ReasonTargetTemplateFailed = "TargetTemplateFailed"

// The flags' names, in the Problems they cause.
const (
	FlagTargetTemplate     = "--target-template"
	FlagFQDNTargetTemplate = "--fqdn-target-template"
)

// ParseTemplate parses the template of the flag named flag (for the
// error); a blank string is no template.
func ParseTemplate(flag, s string) (*template.Template, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := template.New(strings.TrimPrefix(flag, "--")).Funcs(TemplateFuncs).Option("missingkey=error").Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return t, nil
}

// TemplateTargets runs --target-template over the object and keeps the
// valid targets (IP addresses or host names); nil template: none.
func (in *Inputs) TemplateTargets(t *template.Template) []string {
	if t == nil {
		return nil
	}
	items, err := ExecFQDNTemplate(t, in.Object)
	if err != nil {
		in.Problem(ReasonTargetTemplateFailed, FlagTargetTemplate, err)
	}
	var out []string
	for _, target := range items {
		if err := ValidateTarget(target); err != nil {
			in.Problem(ReasonTargetTemplateFailed, FlagTargetTemplate, err)
			continue
		}
		out = append(out, target)
	}
	return out
}

// TemplatePair is one name:target pair of --fqdn-target-template.
type TemplatePair struct{ Name, Target string }

// TemplatePairs runs --fqdn-target-template over the object: its
// comma-separated items are name:target pairs, split at the first ':' (an
// IPv6 target keeps its own). A pair whose name or target is empty is
// skipped without a word, as ExternalDNS does: the template reads a field
// a controller has not filled yet. An item without ':', an invalid name
// or target is reported. nil template: none.
func (in *Inputs) TemplatePairs(t *template.Template) []TemplatePair {
	if t == nil {
		return nil
	}
	items, err := ExecFQDNTemplate(t, in.Object)
	if err != nil {
		in.Problem(ReasonTargetTemplateFailed, FlagFQDNTargetTemplate, err)
	}
	var out []TemplatePair
	for _, item := range items {
		name, target, ok := strings.Cut(item, ":")
		if !ok {
			in.Problem(ReasonTargetTemplateFailed, FlagFQDNTargetTemplate, fmt.Errorf("%q is not name:target", item))
			continue
		}
		name = strings.TrimSuffix(strings.TrimSpace(name), ".")
		target = strings.TrimSuffix(strings.TrimSpace(target), ".")
		if name == "" || target == "" {
			continue
		}
		if err := errors.Join(ValidateHostname(name, true), ValidateTarget(target)); err != nil {
			in.Problem(ReasonTargetTemplateFailed, FlagFQDNTargetTemplate, err)
			continue
		}
		out = append(out, TemplatePair{Name: name, Target: target})
	}
	return out
}

// AddTemplatePairs adds the --fqdn-target-template pairs to set when the
// object gave it no name yet or with --combine-fqdn-annotation (as
// ExternalDNS' ApplyFQDNTargetTemplate); it returns how many were added.
// The --fqdn-template names come after: only when set is still empty or
// with --combine-fqdn-annotation.
func (in *Inputs) AddTemplatePairs(o SharedOptions, set *EndpointSet) int {
	if o.FQDNTargetTemplate == nil || (set.Len() > 0 && !o.CombineFQDNAnnotation) {
		return 0
	}
	pairs := in.TemplatePairs(o.FQDNTargetTemplate)
	for _, p := range pairs {
		set.Add(p.Name, p.Target)
	}
	return len(pairs)
}
