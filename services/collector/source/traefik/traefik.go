// Package traefik holds the collector's traefik-proxy source: DNS names
// from the Host rules of Traefik's IngressRoutes and IngressRouteTCPs, and
// from the hostname annotation of those and IngressRouteUDPs, pointing at
// the target annotation, by the rules of ExternalDNS' traefik-proxy source
// (see README.md beside this file).
//
// Traefik's resources are read through lazyinformer, one informer per
// kind and API group: a cluster without Traefik, or without its legacy
// traefik.containo.us group, makes the source wait, not fail.
package traefik

import (
	"flag"
	"time"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "traefik-proxy"

// ReasonInvalidSpec: an object's spec does not have the shape of
// Traefik's API; reported, the rest of the object still read.
const ReasonInvalidSpec = "InvalidSpec"

// Flags are the source's own flags, ExternalDNS' names.
type Flags struct {
	// DisableNew stops reading the traefik.io group (--traefik-disable-new).
	DisableNew bool
	// EnableLegacy also reads Traefik v2's traefik.containo.us group
	// (--traefik-enable-legacy).
	EnableLegacy bool
	// PollInterval is how often discovery is asked whether a kind is
	// served, while it is not (default lazyinformer.DefaultPollInterval;
	// not a flag).
	PollInterval time.Duration
}

// RegisterFlags adds the source's flags to fs.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&f.DisableNew, "traefik-disable-new", false, "traefik-proxy source: do not read the traefik.io API group")
	fs.BoolVar(&f.EnableLegacy, "traefik-enable-legacy", false, "traefik-proxy source: also read Traefik v2's legacy traefik.containo.us API group")
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}
