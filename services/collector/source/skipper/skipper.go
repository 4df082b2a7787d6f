// Package skipper holds the collector's skipper-routegroup source: DNS
// names from the hosts of Skipper's zalando.org RouteGroups, at the load
// balancer their status names, by the rules of ExternalDNS'
// skipper-routegroup source (see README.md beside this file).
//
// ExternalDNS lists RouteGroups over plain HTTP on every run; here they
// are watched through lazyinformer, which starts the informer when the
// resource appears.
package skipper

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/onekind"
)

// Name is the --source name.
const Name = "skipper-routegroup"

// DefaultGroupVersion is the RouteGroup API read unless
// --skipper-routegroup-groupversion names another, as in ExternalDNS.
const DefaultGroupVersion = "zalando.org/v1"

// ReasonInvalidSpec: the RouteGroup's spec or status does not have the
// shape of Skipper's API.
const ReasonInvalidSpec = "InvalidSpec"

// Flags are the source's settings.
type Flags struct {
	// GroupVersion is the RouteGroups' "group/version"
	// (--skipper-routegroup-groupversion).
	GroupVersion string
	// PollInterval is how often discovery is asked whether RouteGroups
	// are served, while they are not (default
	// lazyinformer.DefaultPollInterval); not a flag.
	PollInterval time.Duration
}

// RegisterFlags adds the source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.GroupVersion, "skipper-routegroup-groupversion", DefaultGroupVersion,
		"skipper-routegroup source: the RouteGroups' API group/version")
}

// Options configure the source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}

// Source is the skipper-routegroup source: one state per RouteGroup,
// read through onekind (a lazy informer, started once RouteGroups are
// served, under the group and version the flag names).
type Source struct {
	*onekind.Source[*RouteGroup]
	opts Options
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	gv, err := parseGroupVersion(opts.GroupVersion)
	if err != nil {
		return nil, err
	}
	s := &Source{opts: opts}
	s.Source, err = onekind.New(onekind.Kind[*RouteGroup]{
		Name: Name, GroupVersion: gv, Kind: "RouteGroup",
		Transform: transformRouteGroup(opts.Filters.AnnotationKeys()), Same: sameRouteGroup, Endpoints: s.RouteGroupEndpoints,
	}, onekind.Options{APIOptions: opts.APIOptions, Namespace: opts.Namespace, PollInterval: opts.PollInterval})
	return s, err
}

// parseGroupVersion reads --skipper-routegroup-groupversion; empty is the
// default.
func parseGroupVersion(s string) (schema.GroupVersion, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultGroupVersion
	}
	group, version, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || group == "" || version == "" || strings.Contains(version, "/") {
		return schema.GroupVersion{}, fmt.Errorf("--skipper-routegroup-groupversion=%q: want group/version, like %s", s, DefaultGroupVersion)
	}
	return schema.GroupVersion{Group: group, Version: version}, nil
}
