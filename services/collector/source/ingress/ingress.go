// Package ingress is the collector's Ingress source: the DNS endpoints a
// networking.k8s.io/v1 Ingress asks for, by the rules of ExternalDNS'
// ingress source (see README.md beside this file).
package ingress

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/informers"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/stage"
)

// Name is the --source name of this source.
const Name = "ingress"

// Annotation keys, without prefix (see source.Annotation).
const (
	AnnotationHostname       = "hostname"
	AnnotationTarget         = "target"
	AnnotationTTL            = "ttl"
	AnnotationController     = "controller"
	AnnotationSetIdentifier  = "set-identifier"
	AnnotationHostnameSource = "ingress-hostname-source"
)

// Values of the ingress-hostname-source annotation (case-insensitive, as
// in ExternalDNS).
const (
	HostnameSourceDefinedHostsOnly = "defined-hosts-only"
	HostnameSourceAnnotationOnly   = "annotation-only"
)

// IngressClassAnnotation is the legacy ingress class annotation
// --ingress-class also matches, when spec.ingressClassName is not set.
const IngressClassAnnotation = "kubernetes.io/ingress.class"

// ControllerValue is the only controller annotation value that does not
// make the source skip an Ingress, as in ExternalDNS.
const ControllerValue = "dns-controller"

// Event reasons (also the invalid-input metric's reason label).
const (
	ReasonInvalidAnnotation  = "InvalidAnnotation"
	ReasonInvalidHostname    = "InvalidHostname"
	ReasonFQDNTemplateFailed = "FQDNTemplateFailed"
)

// Flags are the flags only the Ingress source has.
type Flags struct {
	// IngressClasses keeps only Ingresses of these classes; empty keeps
	// all (--ingress-class, repeatable).
	IngressClasses stage.StringList
	// IgnoreTLSSpec ignores spec.tls[].hosts (--ignore-ingress-tls-spec).
	IgnoreTLSSpec bool
	// IgnoreRulesSpec ignores spec.rules[].host (--ignore-ingress-rules-spec).
	IgnoreRulesSpec bool
}

// RegisterFlags adds the Ingress source's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&f.IngressClasses, "ingress-class",
		"Ingress source: only use Ingresses of this class (spec.ingressClassName, else the kubernetes.io/ingress.class annotation); repeatable; default: all")
	fs.BoolVar(&f.IgnoreTLSSpec, "ignore-ingress-tls-spec", false, "Ingress source: ignore the hosts of spec.tls")
	fs.BoolVar(&f.IgnoreRulesSpec, "ignore-ingress-rules-spec", false, "Ingress source: ignore the hosts of spec.rules")
}

// Options configure the Ingress source.
type Options struct {
	Flags
	source.SharedOptions
	// AnnotationFilter is --annotation-filter as given, to refuse it
	// together with --ingress-class when it selects on the class annotation.
	AnnotationFilter string
}

// Source is the Ingress source.
type Source struct {
	opts   Options
	lister networkinglisters.IngressLister
}

var _ source.Source = (*Source)(nil)

// New validates the options and returns the source.
func New(opts Options) (*Source, error) {
	if len(opts.IngressClasses) > 0 && opts.Filters.Annotations != nil {
		reqs, _ := opts.Filters.Annotations.Requirements()
		for _, r := range reqs {
			if r.Key() == IngressClassAnnotation {
				return nil, errors.New("--ingress-class is mutually exclusive with the kubernetes.io/ingress.class annotation filter")
			}
		}
	}
	return &Source{opts: opts}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: one Ingress informer whose handlers
// enqueue the changed Ingress. Its transform also keeps the legacy
// kubernetes.io/ingress.class annotation, which --ingress-class reads.
func (s *Source) Register(factory informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	inf := factory.Networking().V1().Ingresses()
	keep := append(s.opts.Filters.AnnotationKeys(), IngressClassAnnotation)
	if err := inf.Informer().SetTransform(source.Transform(keep...)); err != nil {
		return nil, fmt.Errorf("ingress informer: %w", err)
	}
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
		return nil, fmt.Errorf("ingress informer: %w", err)
	}
	return reg.HasSynced, nil
}

// Endpoints implements source.Source.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	get := func() (*networkingv1.Ingress, error) { return s.lister.Ingresses(key.Namespace).Get(key.Name) }
	return source.ListerEndpoints(Name, s.lister != nil, get, s.IngressEndpoints)
}

// matchesClass applies --ingress-class as ExternalDNS does: a non-empty
// spec.ingressClassName must be one of the classes; without it, the
// kubernetes.io/ingress.class annotation must be.
func (s *Source) matchesClass(ing *networkingv1.Ingress) bool {
	if len(s.opts.IngressClasses) == 0 {
		return true
	}
	if c := ing.Spec.IngressClassName; c != nil && *c != "" {
		return slices.Contains(s.opts.IngressClasses, *c)
	}
	v, ok := ing.Annotations[IngressClassAnnotation]
	return ok && slices.Contains(s.opts.IngressClasses, v)
}

// IngressEndpoints computes the endpoints of one Ingress.
func (s *Source) IngressEndpoints(ing *networkingv1.Ingress) ([]events.Endpoint, []error) {
	if v, _, ok := source.Annotation(ing.Annotations, AnnotationController); ok && v != ControllerValue {
		return nil, nil
	}
	if !s.opts.Filters.Matches(ing.Labels, ing.Annotations) || !s.matchesClass(ing) {
		return nil, nil
	}
	var problems []error
	problem := func(reason, field string, err error) {
		problems = append(problems, &source.Problem{Object: ing, Reason: reason, Field: field, Err: err})
	}

	var ttl int64
	if v, k, ok := source.Annotation(ing.Annotations, AnnotationTTL); ok {
		if t, err := source.ParseTTL(v); err != nil {
			problem(ReasonInvalidAnnotation, k, err)
		} else {
			ttl = t
		}
	}
	setID, _, _ := source.Annotation(ing.Annotations, AnnotationSetIdentifier)
	setID = strings.TrimSpace(setID)

	// Targets: the target annotation's valid entries, else the load
	// balancer status.
	var targets []string
	if v, k, ok := source.Annotation(ing.Annotations, AnnotationTarget); ok {
		for _, t := range source.SplitList(v) {
			if err := source.ValidateTarget(t); err != nil {
				problem(ReasonInvalidAnnotation, k, err)
				continue
			}
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			for _, t := range []string{lb.IP, lb.Hostname} {
				if t == "" {
					continue
				}
				if err := source.ValidateTarget(t); err != nil {
					problem(ReasonInvalidHostname, "status.loadBalancer.ingress", err)
					continue
				}
				targets = append(targets, t)
			}
		}
	}

	// Which names: spec.rules and spec.tls ("defined hosts"), the hostname
	// annotation, as narrowed by the ingress-hostname-source annotation.
	definedHosts, annotationHosts := true, !s.opts.IgnoreHostnameAnnotation
	if v, k, ok := source.Annotation(ing.Annotations, AnnotationHostnameSource); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case HostnameSourceDefinedHostsOnly:
			annotationHosts = false
		case HostnameSourceAnnotationOnly:
			definedHosts = false
		default:
			// ExternalDNS takes no defined-host nor annotation name then.
			problem(ReasonInvalidAnnotation, k, fmt.Errorf("unknown value %q (known: %s, %s); no rule, tls or hostname annotation name is used",
				v, HostnameSourceDefinedHostsOnly, HostnameSourceAnnotationOnly))
			definedHosts, annotationHosts = false, false
		}
	}
	var set source.EndpointSet
	add := func(h, field, reason string) {
		h = strings.TrimSuffix(strings.TrimSpace(h), ".")
		if h == "" {
			return
		}
		if err := source.ValidateHostname(h, true); err != nil {
			problem(reason, field, err)
			return
		}
		set.Add(h, targets...)
	}
	if definedHosts {
		if !s.opts.IgnoreRulesSpec {
			for _, r := range ing.Spec.Rules {
				add(r.Host, "spec.rules.host", ReasonInvalidHostname)
			}
		}
		if !s.opts.IgnoreTLSSpec {
			for _, t := range ing.Spec.TLS {
				for _, h := range t.Hosts {
					add(h, "spec.tls.hosts", ReasonInvalidHostname)
				}
			}
		}
	}
	if annotationHosts {
		if v, k, ok := source.Annotation(ing.Annotations, AnnotationHostname); ok {
			for _, h := range source.SplitList(v) {
				add(h, k, ReasonInvalidAnnotation)
			}
		}
	}
	if s.opts.FQDNTemplate != nil && (set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		hosts, err := source.ExecFQDNTemplate(s.opts.FQDNTemplate, ing)
		if err != nil {
			problem(ReasonFQDNTemplateFailed, "--fqdn-template", err)
		}
		for _, h := range hosts {
			add(h, "--fqdn-template", ReasonFQDNTemplateFailed)
		}
	}
	eps := set.Endpoints(ttl)
	if setID != "" {
		for i := range eps {
			eps[i].SetIdentifier = setID
		}
	}
	return eps, problems
}
