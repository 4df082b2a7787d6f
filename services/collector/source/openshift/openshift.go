// Package openshift holds the collector's openshift-route source: DNS
// names from the hosts OpenShift's routers admitted for route.openshift.io
// Routes, pointing at the router's canonical hostname, by the rules of
// ExternalDNS' openshift-route source (see README.md beside this file).
//
// Routes are read through lazyinformer: on a cluster without OpenShift's
// Route API the source waits for it instead of failing, and nothing is
// published or taken back meanwhile.
package openshift

import (
	"flag"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "openshift-route"

// GroupVersion is the Route API the source reads.
var GroupVersion = schema.GroupVersion{Group: "route.openshift.io", Version: "v1"}

// ReasonInvalidSpec: a Route's spec or status does not have the shape of
// OpenShift's API; reported, the rest of the Route still read.
const ReasonInvalidSpec = "InvalidSpec"

// Flags are the source's own flags.
type Flags struct {
	// RouterName, when set, takes a Route's host and target only from the
	// status.ingress entry of the router of that name
	// (--openshift-router-name); empty: the first admitted entry.
	RouterName string
	// PollInterval is how often discovery is asked whether Routes are
	// served, while they are not (default lazyinformer.DefaultPollInterval;
	// not a flag).
	PollInterval time.Duration
}

// RegisterFlags adds the source's flags to fs.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.RouterName, "openshift-router-name", "", "openshift-route source: take a Route's host and target only from the router of this name; empty: the first router that admitted it")
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}
