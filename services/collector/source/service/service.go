// Package service is the collector's Service source: the DNS endpoints a
// Kubernetes Service asks for, by the rules of ExternalDNS' service source
// (see README.md beside this file).
package service

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/stage"
)

// Name is the --source name of this source.
const Name = "service"

// Annotation keys, without prefix (see source.Annotation).
const (
	AnnotationHostname         = source.AnnotationHostname
	AnnotationInternalHostname = source.AnnotationInternalHostname
	AnnotationTarget           = source.AnnotationTarget
	AnnotationTTL              = source.AnnotationTTL
	AnnotationController       = source.AnnotationController
	// AnnotationEndpointsType on a headless Service picks the targets of
	// its Pods: EndpointsTypeNodeExternalIP or EndpointsTypeHostIP.
	AnnotationEndpointsType = "endpoints-type"
	// AnnotationAccess on a NodePort Service picks the Node addresses:
	// AccessPublic or AccessPrivate.
	AnnotationAccess = "access"
)

// Values of the endpoints-type and access annotations.
const (
	EndpointsTypeNodeExternalIP = "NodeExternalIP"
	EndpointsTypeHostIP         = "HostIP"
	AccessPublic                = "public"
	AccessPrivate               = "private"
)

// ControllerValue is the only controller annotation value that does not
// make the source skip an object, as in ExternalDNS.
const ControllerValue = source.ControllerValue

// Event reasons (also the invalid-input metric's reason label).
const (
	ReasonInvalidAnnotation  = source.ReasonInvalidAnnotation
	ReasonFQDNTemplateFailed = source.ReasonFQDNTemplateFailed
	// ReasonInvalidHostname: a name derived from a hostname (a Pod's
	// spec.hostname prefixed, an SRV name) is not a valid DNS name.
	ReasonInvalidHostname = source.ReasonInvalidHostname
)

// Flags are the flags only the Service source has.
type Flags struct {
	// ServiceTypeFilter keeps only Services of these spec.type values;
	// empty keeps all (--service-type-filter).
	ServiceTypeFilter stage.StringList
	// PublishInternal publishes the cluster IP of ClusterIP Services for
	// hostname annotations too (--publish-internal-services).
	PublishInternal bool
	// PublishHostIP makes headless Services publish their Pods' host IP
	// instead of the Pod IP (--publish-host-ip).
	PublishHostIP bool
	// AlwaysPublishNotReadyAddresses makes headless Services publish their
	// not-ready endpoints too, as spec.publishNotReadyAddresses does
	// (--always-publish-not-ready-addresses).
	AlwaysPublishNotReadyAddresses bool
	// ResolveLoadBalancerHostname publishes the addresses a load balancer
	// hostname resolves to instead of a CNAME to it
	// (--resolve-service-load-balancer-hostname).
	ResolveLoadBalancerHostname bool

	// Resolver resolves load balancer hostnames (not a flag; nil:
	// net.DefaultResolver).
	Resolver Resolver
	// ResolveInterval is how often Services with a resolved hostname are
	// recomputed (not a flag; default DefaultResolveInterval).
	ResolveInterval time.Duration
}

// RegisterFlags adds the Service source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&f.ServiceTypeFilter, "service-type-filter",
		"only use Services of this spec.type (ClusterIP, NodePort, LoadBalancer, ExternalName); repeatable; default: all")
	fs.BoolVar(&f.PublishInternal, "publish-internal-services", false,
		"publish the cluster IP of ClusterIP Services for their hostname annotation too")
	fs.BoolVar(&f.PublishHostIP, "publish-host-ip", false,
		"headless Services publish the host IP of their Pods instead of the Pod IP")
	fs.BoolVar(&f.AlwaysPublishNotReadyAddresses, "always-publish-not-ready-addresses", false,
		"headless Services publish not-ready endpoints too, as if spec.publishNotReadyAddresses were set")
	fs.BoolVar(&f.ResolveLoadBalancerHostname, "resolve-service-load-balancer-hostname", false,
		"publish the addresses a Service's load balancer hostname resolves to instead of a CNAME to it")
}

// Options configure the Service source.
type Options struct {
	Flags
	source.SharedOptions
	// ManagedRecordTypes are the record types the pipeline manages
	// (--managed-record-types, shared with the planner); NodePort Services
	// publish SRV records only when it holds SRV. Empty: A, AAAA, CNAME.
	ManagedRecordTypes []string
	// ExposeInternalIPv6 and IncludeUnschedulable are the Node source's
	// flags, which ExternalDNS applies to NodePort Services' Nodes too
	// (--expose-internal-ipv6, --exclude-unschedulable).
	ExposeInternalIPv6, IncludeUnschedulable bool
}

var knownTypes = []string{
	string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort),
	string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeExternalName),
}

// Source is the Service source.
type Source struct {
	opts Options
	srv  bool // publish SRV records of NodePort Services

	lister corelisters.ServiceLister
	// The dependent caches, set by Register when some Service type that
	// needs them passes --service-type-filter (nil otherwise).
	services cache.Indexer // Services, with indexDeps
	slices   cache.Indexer // EndpointSlices, with indexByService
	pods     corelisters.PodLister
	podIndex cache.Indexer // Pods, with source.IndexPodsByNode
	nodes    corelisters.NodeLister
	// resolveIndex holds the Services, with indexResolve, when
	// --resolve-service-load-balancer-hostname is set.
	resolveIndex cache.Indexer
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source.
func New(opts Options) (*Source, error) {
	for _, t := range opts.ServiceTypeFilter {
		if !slices.Contains(knownTypes, t) {
			return nil, fmt.Errorf("--service-type-filter: unknown service type %q (known: %v)", t, knownTypes)
		}
	}
	s := &Source{opts: opts}
	for _, t := range opts.ManagedRecordTypes {
		if strings.EqualFold(strings.TrimSpace(t), events.RecordTypeSRV) {
			s.srv = true
		}
	}
	return s, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Endpoints implements source.Source.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	get := func() (*corev1.Service, error) { return s.lister.Services(key.Namespace).Get(key.Name) }
	return source.ListerEndpoints(Name, s.lister != nil, get, s.ServiceEndpoints)
}

// ServiceEndpoints computes the endpoints of one Service: its names (from
// the hostname annotations, then --fqdn-template) with the targets its
// type gives, unless the target annotation replaces them.
func (s *Source) ServiceEndpoints(svc *corev1.Service) ([]events.Endpoint, []error) {
	if !s.selects(svc) {
		return nil, nil
	}
	n := &serviceNames{Inputs: source.NewInputs(svc), s: s, svc: svc}
	ttl := n.TTL()
	n.override = n.Targets()
	if !s.opts.IgnoreHostnameAnnotation {
		n.addAnnotated()
	}
	// --fqdn-target-template's pairs come before --fqdn-template's names,
	// which then only fill a Service that still has none (or combine).
	n.AddTemplatePairs(s.opts.SharedOptions, &n.set)
	if s.opts.FQDNTemplate != nil && (n.set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		n.addTemplated()
	}
	return n.Routed(n.set.Endpoints(ttl)), n.Problems
}

// selects reports whether svc is this source's: its controller, through
// the label and annotation filters and --service-type-filter.
func (s *Source) selects(svc *corev1.Service) bool {
	if v, _, ok := source.Annotation(svc.Annotations, AnnotationController); ok && v != ControllerValue {
		return false
	}
	if !s.opts.Filters.Matches(svc.Labels, svc.Annotations) {
		return false
	}
	return len(s.opts.ServiceTypeFilter) == 0 || slices.Contains(s.opts.ServiceTypeFilter, string(svc.Spec.Type))
}

// targets are the targets a hostname of svc gets from the Service itself,
// by spec.type, for the types that need no other object (not headless
// ClusterIP, not NodePort) and are not a load balancer's (see
// loadBalancerTargets). useClusterIP is set for internal-hostname names.
func (s *Source) targets(svc *corev1.Service, useClusterIP bool) []string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		return clusterIP(svc)
	case corev1.ServiceTypeClusterIP, "":
		// Headless Services: headlessTargets.
		if useClusterIP || s.opts.PublishInternal {
			return clusterIP(svc)
		}
		return nil
	case corev1.ServiceTypeExternalName:
		if len(svc.Spec.ExternalIPs) > 0 {
			return slices.Clone(svc.Spec.ExternalIPs)
		}
		if svc.Spec.ExternalName != "" {
			return []string{svc.Spec.ExternalName}
		}
	}
	return nil
}

func clusterIP(svc *corev1.Service) []string {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	return []string{svc.Spec.ClusterIP}
}

// loadBalancerTargets are spec.externalIPs, else the load balancer's IPs
// and hostnames, the hostnames resolved with
// --resolve-service-load-balancer-hostname.
func (s *Source) loadBalancerTargets(svc *corev1.Service, problems *[]error) []string {
	if len(svc.Spec.ExternalIPs) > 0 {
		return slices.Clone(svc.Spec.ExternalIPs)
	}
	var out []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			out = append(out, ing.IP)
		}
		if ing.Hostname == "" {
			continue
		}
		if !s.opts.ResolveLoadBalancerHostname {
			out = append(out, ing.Hostname)
			continue
		}
		addrs, err := s.resolve(svc, ing.Hostname, problems)
		if err != nil {
			*problems = append(*problems, err)
			continue
		}
		out = append(out, addrs...)
	}
	return out
}
