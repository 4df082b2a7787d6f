// Package f5 holds the collector's F5 sources, f5-virtualserver and
// f5-transportserver: DNS names from the hosts of F5 Container Ingress
// Services' cis.f5.com/v1 VirtualServers and TransportServers, at the
// address BIG-IP serves them on, by the rules of ExternalDNS' F5 sources
// (see README.md beside this file).
//
// F5's CRDs may be installed after the collector started: the sources
// read them through lazyinformer, which starts the informer when the
// resource appears.
package f5

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// GroupVersion is the F5 CIS API the sources read.
var GroupVersion = schema.GroupVersion{Group: "cis.f5.com", Version: "v1"}

// Event reasons of the F5 sources besides the shared ones.
const (
	// ReasonInvalidSpec: the object's spec or status does not have the
	// shape of F5's API.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidAddress: spec.virtualServerAddress or status.vsAddress
	// is neither an IP address nor a hostname.
	ReasonInvalidAddress = "InvalidAddress"
)

// Flags are the settings only the F5 sources have; none is a flag.
type Flags struct {
	// PollInterval is how often discovery is asked whether F5's resources
	// are served, while they are not (default
	// lazyinformer.DefaultPollInterval).
	PollInterval time.Duration
}

// Options configure an F5 source.
type Options struct {
	Flags
	source.SharedOptions
	source.APIOptions
	// Namespace limits the source to one namespace; empty: all.
	Namespace string
}

// ServerSource is an F5 source: the same rules over one kind.
type ServerSource struct {
	name    string
	kind    string
	opts    Options
	dynamic dynamic.Interface
	servers *lazyinformer.Informer
	// resync is the collector's Runtime.Resync, set by Run before the
	// lazy informer starts.
	resync func()
}

var (
	_ source.Source = (*ServerSource)(nil)
	_ source.Runner = (*ServerSource)(nil)
)

func newServerSource(name, kind string, opts Options) (*ServerSource, error) {
	dyn, err := opts.Dynamic(name)
	if err != nil {
		return nil, err
	}
	return &ServerSource{name: name, kind: kind, opts: opts, dynamic: dyn, resync: func() {}}, nil
}

// Name implements source.Source.
func (s *ServerSource) Name() string { return s.name }

// Register implements source.Source: an object's change enqueues it;
// nothing else is watched.
func (s *ServerSource) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.servers, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: GroupVersion, Kind: s.kind,
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformServer(s.opts.Filters.AnnotationKeys()),
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Server)
				c, _ := cur.(*Server)
				if o != nil && c != nil && sameServer(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.servers.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return s.servers.HasSynced, nil
}

// Run implements source.Runner: it runs the informer once the kind is
// served.
func (s *ServerSource) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.servers.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until the kind
// is served and synced.
func (s *ServerSource) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	srv, exists, err := source.Lookup[*Server](s.servers, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.ServerEndpoints(srv)
	return eps, true, problems
}
