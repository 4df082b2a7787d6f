// Package unstructured holds the collector's unstructured source: DNS
// names from the hostname and target annotations of any API resource the
// user names with --unstructured-resource (a team's own CRDs, ConfigMaps,
// KubeVirt VirtualMachineInstances, ...), and from --fqdn-template,
// --target-template and --fqdn-target-template run over the whole object
// (its spec and status), by the rules of ExternalDNS v0.23's unstructured
// source (see README.md beside this file).
//
// Each resource is read through its own lazyinformer: a resource not
// served yet makes the source wait for it, not fail.
package unstructured

import (
	"flag"
	"time"

	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/stage"
)

// Name is the --source name.
const Name = "unstructured"

// ReasonTargetTemplateFailed: --target-template or --fqdn-target-template
// failed on an object or made an invalid target; reported on the object.
const ReasonTargetTemplateFailed = "TargetTemplateFailed"

// Flags are the source's own flags, ExternalDNS' names.
type Flags struct {
	// Resources are the resources read, "resource.version.group" (core:
	// "resource.version"), --unstructured-resource, repeatable.
	Resources stage.StringList
	// TargetTemplate makes the targets of the --fqdn-template names and
	// FQDNTargetTemplate "name:target" pairs: the collector's
	// --target-template and --fqdn-target-template, which this source
	// parses as ExternalDNS' unstructured source does (lenient: a field
	// an object lacks may be tested).
	TargetTemplate, FQDNTargetTemplate string
	// PollInterval is how often discovery is asked whether a resource is
	// served, while it is not (default lazyinformer.DefaultPollInterval;
	// not a flag).
	PollInterval time.Duration
}

// RegisterFlags adds the source's flags to fs.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&f.Resources, "unstructured-resource", "unstructured source: a resource to read, as resource.version.group (core: resource.version, e.g. configmaps.v1); repeatable")
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all
	// (cluster-scoped resources are read whatever it says).
	Namespace string
}
