// Package pod is the collector's Pod source: DNS names for Pods from their
// annotations, --pod-source-domain and --fqdn-template, by the rules of
// ExternalDNS' pod source (see README.md beside this file).
package pod

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
const Name = "pod"

// Flags are the flags only the Pod source has. Their zero value is
// ExternalDNS' defaults.
type Flags struct {
	// IncludeNonHostNetworkPods lets the annotations and --pod-source-domain
	// apply to every Pod, not only hostNetwork ones
	// (--ignore-non-host-network-pods=false).
	IncludeNonHostNetworkPods bool
	// SourceDomain gives every Pod the name <pod name>.<domain>
	// (--pod-source-domain).
	SourceDomain string
}

// RegisterFlags adds the Pod source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(source.InverseBool{B: &f.IncludeNonHostNetworkPods}, "ignore-non-host-network-pods",
		"Pod source: only hostNetwork Pods get names from annotations and --pod-source-domain (default true)")
	fs.StringVar(&f.SourceDomain, "pod-source-domain", "", "Pod source: publish every Pod as <pod name>.<this domain>")
}

// Options configure the Pod source.
type Options struct {
	Flags
	// SharedOptions (IgnoreHostnameAnnotation is not used).
	source.SharedOptions
}

// Source is the Pod source.
type Source struct {
	opts     Options
	pods     corelisters.PodLister
	podIndex cache.Indexer // with source.IndexPodsByNode
	nodes    corelisters.NodeLister
}

var _ source.Source = (*Source)(nil)

// New validates the options and returns the source.
func New(opts Options) (*Source, error) {
	if opts.SourceDomain != "" {
		if err := source.ValidateHostname(opts.SourceDomain, false); err != nil {
			return nil, fmt.Errorf("--pod-source-domain: %w", err)
		}
	}
	return &Source{opts: opts}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source. Pods: a change of what the source
// reads enqueues the Pod. Nodes: a change of addresses (or a deletion)
// enqueues the Pods on that Node whose names take the Node's addresses
// (hostname annotation, no target annotation), found by index.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	keep := s.opts.Filters.AnnotationKeys()
	podInf := factory.Core().V1().Pods()
	if err := podInf.Informer().SetTransform(source.TransformPod(keep...)); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	if err := source.AddIndexer(podInf.Informer(), source.IndexPodsByNode, source.PodNode); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	s.pods, s.podIndex = podInf.Lister(), podInf.Informer().GetIndexer()
	handle := source.EnqueueObject(enqueue)
	podReg, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: handle,
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Pod)
			c, _ := cur.(*corev1.Pod)
			if o != nil && c != nil && samePod(o, c) {
				return
			}
			handle(cur)
		},
		DeleteFunc: handle,
	})
	if err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}

	nodeInf := factory.Core().V1().Nodes()
	if err := nodeInf.Informer().SetTransform(source.TransformNode(keep...)); err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	s.nodes = nodeInf.Lister()
	nodeReg, err := nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { s.enqueueOnNode(enqueue, obj) },
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*corev1.Node)
			c, _ := cur.(*corev1.Node)
			if o != nil && c != nil && slices.Equal(o.Status.Addresses, c.Status.Addresses) {
				return
			}
			s.enqueueOnNode(enqueue, cur)
		},
		DeleteFunc: func(obj any) { s.enqueueOnNode(enqueue, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("node informer: %w", err)
	}
	return func() bool { return podReg.HasSynced() && nodeReg.HasSynced() }, nil
}

// samePod reports whether two (transformed) versions of a Pod are the
// same to this source.
func samePod(a, b *corev1.Pod) bool {
	return a.Spec.HostNetwork == b.Spec.HostNetwork && a.Spec.NodeName == b.Spec.NodeName &&
		a.Status.PodIP == b.Status.PodIP && slices.Equal(a.Status.PodIPs, b.Status.PodIPs) &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations)
}

// enqueueOnNode enqueues the Pods on a Node that publish its addresses.
func (s *Source) enqueueOnNode(enqueue func(source.Key), obj any) {
	n, ok := source.Unwrap(obj).(*corev1.Node)
	if !ok {
		return
	}
	objs, _ := s.podIndex.ByIndex(source.IndexPodsByNode, n.Name)
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && s.usesNode(p) {
			enqueue(source.Key{Namespace: p.Namespace, Name: p.Name})
		}
	}
}

// usesNode reports whether the Pod's endpoints read its Node's addresses.
func (s *Source) usesNode(p *corev1.Pod) bool {
	if !s.opts.IncludeNonHostNetworkPods && !p.Spec.HostNetwork {
		return false
	}
	if _, _, ok := source.Annotation(p.Annotations, source.AnnotationHostname); !ok {
		return false
	}
	return len(source.NewInputs(p).Targets()) == 0
}

// Endpoints implements source.Source.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	get := func() (*corev1.Pod, error) { return s.pods.Pods(key.Namespace).Get(key.Name) }
	return source.ListerEndpoints(Name, s.pods != nil, get, s.PodEndpoints)
}

// PodEndpoints computes the endpoints of one Pod.
func (s *Source) PodEndpoints(p *corev1.Pod) ([]events.Endpoint, []error) {
	if !source.Controlled(p.Annotations) || !s.opts.Filters.Matches(p.Labels, p.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(p)
	ttl := in.TTL()
	var set source.EndpointSet
	// The annotations and the source domain, for hostNetwork Pods unless
	// --ignore-non-host-network-pods=false. The target annotation replaces
	// what each name would get.
	if s.opts.IncludeNonHostNetworkPods || p.Spec.HostNetwork {
		targets := in.Targets()
		or := func(fallback []string) []string {
			if len(targets) > 0 {
				return targets
			}
			return fallback
		}
		for _, h := range in.Hostnames(source.AnnotationInternalHostname) {
			set.Add(h, or(podIP(p))...)
		}
		if names := in.Hostnames(source.AnnotationHostname); len(names) > 0 {
			t := targets
			if len(t) == 0 {
				t = s.nodeAddresses(p)
			}
			for _, h := range names {
				set.Add(h, t...)
			}
		}
		if s.opts.SourceDomain != "" {
			for _, h := range in.ValidHostnames([]string{p.Name + "." + s.opts.SourceDomain}, "--pod-source-domain", source.ReasonInvalidHostname) {
				set.Add(h, or(podIP(p))...)
			}
		}
	}
	// --fqdn-target-template's name:target pairs, when the Pod named
	// nothing or with --combine-fqdn-annotation; then the template, for
	// every Pod, with all its Pod IPs.
	in.AddTemplatePairs(s.opts.SharedOptions, &set)
	if s.opts.FQDNTemplate != nil && (set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		var ips []string
		for _, ip := range p.Status.PodIPs {
			if ip.IP != "" {
				ips = append(ips, ip.IP)
			}
		}
		for _, h := range in.TemplateNames(s.opts.FQDNTemplate) {
			set.Add(h, ips...)
		}
	}
	return in.Routed(set.Endpoints(ttl)), in.Problems
}

func podIP(p *corev1.Pod) []string {
	if p.Status.PodIP == "" {
		return nil
	}
	return []string{p.Status.PodIP}
}

// nodeAddresses are the ExternalIP and IPv6 InternalIP addresses of the
// Pod's Node.
func (s *Source) nodeAddresses(p *corev1.Pod) []string {
	if p.Spec.NodeName == "" {
		return nil
	}
	n, err := s.nodes.Get(p.Spec.NodeName)
	if err != nil {
		return nil
	}
	return source.ExternalAddresses(n)
}
