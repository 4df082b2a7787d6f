// Package ingress is the collector's Ingress source: the DNS endpoints a
// networking.k8s.io/v1 Ingress asks for, by the rules of ExternalDNS'
// ingress source (see README.md beside this file).
package ingress

import (
	"errors"
	"flag"
	"fmt"
	"slices"

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

// IngressEndpoints computes the endpoints of one Ingress: its names
// (spec.rules, spec.tls, the hostname annotation, as the
// ingress-hostname-source annotation narrows them, then --fqdn-template)
// with its targets.
func (s *Source) IngressEndpoints(ing *networkingv1.Ingress) ([]events.Endpoint, []error) {
	if !s.selects(ing) {
		return nil, nil
	}
	n := &ingressNames{Inputs: source.NewInputs(ing), s: s, ing: ing}
	ttl := n.TTL()
	n.targets = n.readTargets()
	defined, annotated := n.hostnameSources()
	if defined {
		n.addDefined()
	}
	if annotated {
		n.addAnnotated()
	}
	if s.opts.FQDNTemplate != nil && (n.set.Len() == 0 || s.opts.CombineFQDNAnnotation) {
		n.addTemplated()
	}
	return n.Routed(n.set.Endpoints(ttl)), n.Problems
}

// selects reports whether ing is this source's: its controller, through
// the label and annotation filters and --ingress-class.
func (s *Source) selects(ing *networkingv1.Ingress) bool {
	if v, _, ok := source.Annotation(ing.Annotations, AnnotationController); ok && v != ControllerValue {
		return false
	}
	return s.opts.Filters.Matches(ing.Labels, ing.Annotations) && s.matchesClass(ing)
}
