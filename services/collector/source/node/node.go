// Package node is the collector's Node source: a DNS name per Kubernetes
// Node with the Node's addresses, by the rules of ExternalDNS' node source
// (see README.md beside this file).
package node

import (
	"flag"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name of this source.
const Name = "node"

// Flags are the flags only the Node source has. Their zero value is
// ExternalDNS' defaults.
type Flags struct {
	// IncludeUnschedulable publishes cordoned Nodes too
	// (--exclude-unschedulable=false, --no-exclude-unschedulable).
	IncludeUnschedulable bool
	// ExposeInternalIPv6 publishes the IPv6 InternalIP addresses of Nodes
	// that have an ExternalIP too (--expose-internal-ipv6); NodePort
	// Services read it as well, as in ExternalDNS.
	ExposeInternalIPv6 bool
}

// RegisterFlags adds the Node source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(source.InverseBool{B: &f.IncludeUnschedulable}, "exclude-unschedulable", "Node source: skip Nodes marked unschedulable (default true)")
	fs.BoolVar(&f.IncludeUnschedulable, "no-exclude-unschedulable", false, "Node source: publish unschedulable Nodes too (same as --exclude-unschedulable=false)")
	fs.BoolVar(&f.ExposeInternalIPv6, "expose-internal-ipv6", false, "Node source and NodePort Services: publish the IPv6 InternalIP addresses of Nodes that have an ExternalIP too")
}

// Options configure the Node source.
type Options struct {
	Flags
	// SharedOptions: with no FQDNTemplate, the Node's name is its hostname.
	source.SharedOptions
}

// Source is the Node source.
type Source struct {
	opts   Options
	lister corelisters.NodeLister
}

var _ source.Source = (*Source)(nil)

// New returns the source.
func New(opts Options) (*Source, error) { return &Source{opts: opts}, nil }

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: the shared Node informer, whose
// handlers enqueue the Node when something the source reads changed
// (heartbeats and conditions are dropped by the transform and change
// nothing).
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	inf := factory.Core().V1().Nodes()
	if err := inf.Informer().SetTransform(source.TransformNode(s.opts.Filters.AnnotationKeys()...)); err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	s.lister = inf.Lister()
	handle := source.EnqueueObject(enqueue)
	reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Node)
			c, _ := cur.(*corev1.Node)
			if o != nil && c != nil && sameNode(o, c) {
				return
			}
			handle(cur)
		},
		DeleteFunc: handle,
	})
	if err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	return reg.HasSynced, nil
}

// sameNode reports whether two (transformed) versions of a Node are the
// same to this source.
func sameNode(a, b *corev1.Node) bool {
	return a.Spec.Unschedulable == b.Spec.Unschedulable && slices.Equal(a.Status.Addresses, b.Status.Addresses) &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations)
}

// Endpoints implements source.Source.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	get := func() (*corev1.Node, error) { return s.lister.Get(key.Name) }
	return source.ListerEndpoints(Name, s.lister != nil, get, s.NodeEndpoints)
}

// NodeEndpoints computes the endpoints of one Node.
func (s *Source) NodeEndpoints(n *corev1.Node) ([]events.Endpoint, []error) {
	if !source.Controlled(n.Annotations) || !s.opts.Filters.Matches(n.Labels, n.Annotations) {
		return nil, nil
	}
	if n.Spec.Unschedulable && !s.opts.IncludeUnschedulable {
		return nil, nil
	}
	in := source.NewInputs(n)
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		targets = s.addresses(n)
	}

	var names []string
	if !s.opts.IgnoreHostnameAnnotation {
		names = in.Hostnames(source.AnnotationHostname)
	}
	// --fqdn-target-template's pairs when the Node named nothing (or
	// combine); they take the place of the Node's name, as the
	// --fqdn-template names do, unless combined with it.
	var set source.EndpointSet
	pairs := 0
	if len(names) == 0 || s.opts.CombineFQDNAnnotation {
		pairs = in.AddTemplatePairs(s.opts.SharedOptions, &set)
	}
	if (len(names) == 0 && pairs == 0) || s.opts.CombineFQDNAnnotation {
		if s.opts.FQDNTemplate != nil {
			names = append(names, in.TemplateNames(s.opts.FQDNTemplate)...)
		} else if len(names) == 0 && (s.opts.FQDNTargetTemplate == nil || s.opts.CombineFQDNAnnotation) {
			names = in.ValidHostnames([]string{n.Name}, "metadata.name", source.ReasonInvalidHostname)
		}
	}
	for _, h := range names {
		set.Add(h, targets...)
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

// addresses are the Node's ExternalIP addresses (with the IPv6 InternalIP
// ones with --expose-internal-ipv6), else its InternalIP ones.
func (s *Source) addresses(n *corev1.Node) []string {
	var a source.NodeAddresses
	a.Add(n)
	switch {
	case len(a.External) == 0:
		return a.Internal
	case s.opts.ExposeInternalIPv6:
		return a.Public()
	}
	return a.External
}
