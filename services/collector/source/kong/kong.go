// Package kong holds the collector's kong-tcpingress source: DNS names
// from the rules' hosts and the hostname annotation of Kong's
// configuration.konghq.com TCPIngresses, pointing at the load balancer in
// their status, by the rules of ExternalDNS' kong-tcpingress source (see
// README.md beside this file).
//
// TCPIngresses are read through lazyinformer: a cluster without Kong
// makes the source wait, not fail.
package kong

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "kong-tcpingress"

// GroupVersion is the TCPIngress API the source reads.
var GroupVersion = schema.GroupVersion{Group: "configuration.konghq.com", Version: "v1beta1"}

// ReasonInvalidSpec: a TCPIngress's spec or status does not have the
// shape of Kong's API; reported, the rest still read.
const ReasonInvalidSpec = "InvalidSpec"

// Flags are the source's settings; none is a flag.
type Flags struct {
	// PollInterval is how often discovery is asked whether TCPIngresses
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
