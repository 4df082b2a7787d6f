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
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
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

// Source is the skipper-routegroup source: one state per RouteGroup.
type Source struct {
	opts        Options
	gv          schema.GroupVersion
	dynamic     dynamic.Interface
	routeGroups *lazyinformer.Informer
	// resync is the collector's Runtime.Resync, set by Run before the
	// lazy informer starts.
	resync func()
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	if opts.RESTConfig == nil || opts.Client == nil {
		return nil, errors.New("skipper-routegroup source: no API server client")
	}
	gv, err := parseGroupVersion(opts.GroupVersion)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(opts.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("skipper-routegroup source: dynamic client: %w", err)
	}
	return &Source{opts: opts, gv: gv, dynamic: dyn, resync: func() {}}, nil
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

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: a RouteGroup's change enqueues it;
// nothing else is watched.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.routeGroups, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: s.gv, Kind: "RouteGroup",
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformRouteGroup(s.opts.Filters.AnnotationKeys()),
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*RouteGroup)
				c, _ := cur.(*RouteGroup)
				if o != nil && c != nil && sameRouteGroup(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.routeGroups.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return s.routeGroups.HasSynced, nil
}

// Run implements source.Runner: it runs the informer once RouteGroups are
// served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.routeGroups.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until RouteGroups
// are served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	rg, exists, err := source.Lookup[*RouteGroup](s.routeGroups, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.RouteGroupEndpoints(rg)
	return eps, true, problems
}
