// Package service is the collector's Service source: the DNS endpoints a
// Kubernetes Service asks for, by the rules of ExternalDNS' service source
// (see README.md beside this file).
package service

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	zsservice "github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name of this source.
const Name = "service"

// Annotation keys, without prefix (see source.Annotation).
const (
	AnnotationHostname         = "hostname"
	AnnotationInternalHostname = "internal-hostname"
	AnnotationTarget           = "target"
	AnnotationTTL              = "ttl"
	AnnotationController       = "controller"
)

// ControllerValue is the only controller annotation value that does not
// make the source skip an object, as in ExternalDNS.
const ControllerValue = "dns-controller"

// Event reasons (also the invalid-input metric's reason label).
const (
	ReasonInvalidAnnotation  = "InvalidAnnotation"
	ReasonFQDNTemplateFailed = "FQDNTemplateFailed"
)

// Flags are the flags only the Service source has.
type Flags struct {
	// ServiceTypeFilter keeps only Services of these spec.type values;
	// empty keeps all (--service-type-filter).
	ServiceTypeFilter zsservice.StringList
	// PublishInternal publishes the cluster IP of ClusterIP Services for
	// hostname annotations too (--publish-internal-services).
	PublishInternal bool
}

// RegisterFlags adds the Service source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&f.ServiceTypeFilter, "service-type-filter",
		"only use Services of this spec.type (ClusterIP, NodePort, LoadBalancer, ExternalName); repeatable; default: all")
	fs.BoolVar(&f.PublishInternal, "publish-internal-services", false,
		"publish the cluster IP of ClusterIP Services for their hostname annotation too")
}

// Options configure the Service source.
type Options struct {
	Flags
	// Filters are --label-filter and --annotation-filter.
	Filters source.Filters
	// FQDNTemplate makes hostnames from the Service (--fqdn-template); nil: none.
	FQDNTemplate *template.Template
	// CombineFQDNAnnotation adds the template's hostnames to the annotated
	// ones instead of using them only as a fallback (--combine-fqdn-annotation).
	CombineFQDNAnnotation bool
	// IgnoreHostnameAnnotation ignores the hostname and internal-hostname
	// annotations (--ignore-hostname-annotation).
	IgnoreHostnameAnnotation bool
}

var knownTypes = []string{
	string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort),
	string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeExternalName),
}

// Source is the Service source.
type Source struct {
	opts   Options
	lister corelisters.ServiceLister
}

var _ source.Source = (*Source)(nil)

// New validates the options and returns the source.
func New(opts Options) (*Source, error) {
	for _, t := range opts.ServiceTypeFilter {
		if !slices.Contains(knownTypes, t) {
			return nil, fmt.Errorf("--service-type-filter: unknown service type %q (known: %v)", t, knownTypes)
		}
	}
	return &Source{opts: opts}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: one Service informer; every change
// to a Service enqueues that Service.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	inf := factory.Core().V1().Services()
	s.lister = inf.Lister()
	handle := func(obj any) {
		if k, err := source.KeyOf(obj); err == nil {
			enqueue(k)
		}
	}
	reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
		DeleteFunc: handle,
	})
	if err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	// Headless (Pods, EndpointSlices) and NodePort (Nodes) Services will
	// register their dependent informers here and enqueue the Services a
	// changed Pod/Node/EndpointSlice belongs to.
	return reg.HasSynced, nil
}

// Endpoints implements source.Source.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	if s.lister == nil {
		return nil, false, []error{errors.New("service source not registered")}
	}
	svc, err := s.lister.Services(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, []error{err}
	}
	eps, problems := s.ServiceEndpoints(svc)
	return eps, true, problems
}

// ServiceEndpoints computes the endpoints of one Service.
func (s *Source) ServiceEndpoints(svc *corev1.Service) ([]events.Endpoint, []error) {
	if v, _, ok := source.Annotation(svc.Annotations, AnnotationController); ok && v != ControllerValue {
		return nil, nil
	}
	if !s.opts.Filters.Matches(svc.Labels, svc.Annotations) {
		return nil, nil
	}
	if len(s.opts.ServiceTypeFilter) > 0 && !slices.Contains(s.opts.ServiceTypeFilter, string(svc.Spec.Type)) {
		return nil, nil
	}
	var problems []error
	problem := func(reason, field string, err error) {
		problems = append(problems, &source.Problem{Object: svc, Reason: reason, Field: field, Err: err})
	}

	var ttl int64
	if v, k, ok := source.Annotation(svc.Annotations, AnnotationTTL); ok {
		if t, err := source.ParseTTL(v); err != nil {
			problem(ReasonInvalidAnnotation, k, err)
		} else {
			ttl = t
		}
	}

	// The target annotation, when it holds at least one valid target,
	// replaces the targets the Service's type would give.
	var override []string
	if v, k, ok := source.Annotation(svc.Annotations, AnnotationTarget); ok {
		for _, t := range source.SplitList(v) {
			if err := source.ValidateTarget(t); err != nil {
				problem(ReasonInvalidAnnotation, k, err)
				continue
			}
			override = append(override, t)
		}
	}
	targets := func(useClusterIP bool) []string {
		if len(override) > 0 {
			return override
		}
		return s.targets(svc, useClusterIP)
	}

	var set source.EndpointSet
	if !s.opts.IgnoreHostnameAnnotation {
		for _, a := range []struct {
			key          string
			useClusterIP bool
		}{{AnnotationHostname, false}, {AnnotationInternalHostname, true}} {
			v, k, ok := source.Annotation(svc.Annotations, a.key)
			if !ok {
				continue
			}
			for _, h := range source.SplitList(v) {
				if err := source.ValidateHostname(h, true); err != nil {
					problem(ReasonInvalidAnnotation, k, err)
					continue
				}
				set.Add(h, targets(a.useClusterIP)...)
			}
		}
	}

	if s.opts.FQDNTemplate != nil && (set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		names, err := source.ExecFQDNTemplate(s.opts.FQDNTemplate, svc)
		if err != nil {
			problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
		}
		for _, h := range names {
			if err := source.ValidateHostname(h, true); err != nil {
				problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
				continue
			}
			set.Add(h, targets(false)...)
		}
	}
	return set.Endpoints(ttl), problems
}

// targets are the targets a hostname of svc gets from the Service itself,
// by spec.type. useClusterIP is set for internal-hostname names.
func (s *Source) targets(svc *corev1.Service, useClusterIP bool) []string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if useClusterIP {
			return clusterIP(svc)
		}
		return loadBalancerTargets(svc)
	case corev1.ServiceTypeClusterIP, "":
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			return s.headlessTargets(svc)
		}
		if useClusterIP || s.opts.PublishInternal {
			return clusterIP(svc)
		}
		return nil
	case corev1.ServiceTypeNodePort:
		return s.nodePortTargets(svc)
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

// headlessTargets will be the addresses of the Service's ready (and, when
// asked, not-ready) endpoints, per Pod, with per-Pod hostnames. Not yet
// implemented: a headless Service without a target annotation publishes
// nothing.
func (s *Source) headlessTargets(*corev1.Service) []string { return nil }

// nodePortTargets will be the addresses of the Nodes the Service runs on,
// plus SRV records per node port. Not yet implemented: a NodePort Service
// without a target annotation publishes nothing.
func (s *Source) nodePortTargets(*corev1.Service) []string { return nil }

func clusterIP(svc *corev1.Service) []string {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	return []string{svc.Spec.ClusterIP}
}

func loadBalancerTargets(svc *corev1.Service) []string {
	if len(svc.Spec.ExternalIPs) > 0 {
		return slices.Clone(svc.Spec.ExternalIPs)
	}
	var out []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			out = append(out, ing.IP)
		}
		if ing.Hostname != "" {
			out = append(out, ing.Hostname)
		}
	}
	return out
}
