// Package ambassador holds the collector's ambassador-host source: DNS
// names from the spec.hostname of Ambassador (Emissary-ingress)
// getambassador.io/v2 Hosts, pointed at the load balancer of the Service
// their external-dns.ambassador-service annotation names, by the rules of
// ExternalDNS' ambassador-host source (see README.md beside this file).
//
// Ambassador's CRDs may be installed after the collector started: the
// source reads Hosts through lazyinformer, which starts the informer when
// the resource appears.
package ambassador

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Name is the --source name.
const Name = "ambassador-host"

// GroupVersion is the Ambassador API the source reads, as ExternalDNS
// does.
var GroupVersion = schema.GroupVersion{Group: "getambassador.io", Version: "v2"}

// Event reasons of the source besides the shared ones.
const (
	// ReasonInvalidSpec: the Host's spec does not have the shape of
	// Ambassador's API.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidServiceReference: the ambassador-service annotation is
	// not "name", "name.namespace" or "namespace/name".
	ReasonInvalidServiceReference = "InvalidServiceReference"
	// ReasonServiceNotFound: the Service the annotation names is not
	// there (or outside --namespace, where the collector cannot see it).
	ReasonServiceNotFound = "ServiceNotFound"
)

// Flags are the settings only this source has; none is a flag.
type Flags struct {
	// PollInterval is how often discovery is asked whether Hosts are
	// served, while they are not (default lazyinformer.DefaultPollInterval).
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

// Source is the ambassador-host source: one state per Host.
type Source struct {
	opts     Options
	dynamic  dynamic.Interface
	hosts    *lazyinformer.Informer
	services corelisters.ServiceLister
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
	dyn, err := opts.Dynamic("ambassador-host")
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, dynamic: dyn, resync: func() {}}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source. A Host's change enqueues it; a
// Service's change of addresses enqueues the Hosts naming it, found by
// index.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	handle := source.EnqueueObject(enqueue)
	var err error
	s.hosts, err = lazyinformer.New(lazyinformer.Options{
		Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: GroupVersion, Kind: "Host",
		Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval,
		Transform: transformHost(append(s.opts.Filters.AnnotationKeys(), AnnotationService)),
		Indexers:  cache.Indexers{indexServiceRef: hostServiceRef},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: handle,
			UpdateFunc: func(old, cur any) {
				o, _ := old.(*Host)
				c, _ := cur.(*Host)
				if o != nil && c != nil && sameHost(o, c) {
					return
				}
				handle(cur)
			},
			DeleteFunc: handle,
		},
		OnSynced: func(context.Context) {
			s.hosts.EnqueueAll(func(ns, name string) { enqueue(source.Key{Namespace: ns, Name: name}) })
			s.resync()
		},
		Logger: s.opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	svcSynced, err := s.registerServices(factory, enqueue)
	if err != nil {
		return nil, err
	}
	return func() bool { return svcSynced() && s.hosts.HasSynced() }, nil
}

// Run implements source.Runner: it runs the Host informer once Hosts are
// served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	s.hosts.Run(ctx)
}

// Endpoints implements source.Source; source.ErrUnknown until Hosts are
// served and synced.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	h, exists, err := source.Lookup[*Host](s.hosts, key)
	if err != nil {
		return nil, false, []error{err}
	}
	if !exists {
		return nil, false, nil
	}
	eps, problems := s.HostEndpoints(h)
	return eps, true, problems
}
