// Package contour holds the collector's contour-httpproxy source: DNS
// names from the virtual host of Contour's projectcontour.io HTTPProxies,
// pointing at the load balancer in their status, by the rules of
// ExternalDNS' contour-httpproxy source (see README.md beside this file).
//
// HTTPProxies are read through lazyinformer: a cluster without Contour
// makes the source wait, not fail.
package contour

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "contour-httpproxy"

// GroupVersion is the HTTPProxy API the source reads.
var GroupVersion = schema.GroupVersion{Group: "projectcontour.io", Version: "v1"}

// ReasonInvalidSpec: an HTTPProxy's spec or status does not have the
// shape of Contour's API; reported, the rest still read.
const ReasonInvalidSpec = "InvalidSpec"

// Flags are the source's settings; none is a flag.
type Flags struct {
	// PollInterval is how often discovery is asked whether HTTPProxies
	// are served, while they are not (default
	// lazyinformer.DefaultPollInterval).
	PollInterval time.Duration
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}
