// Package source defines what a collector source is: something that watches
// one kind of Kubernetes object through shared informers and computes, for
// one object at a time, the complete set of DNS endpoints that object wants.
//
// A source never publishes anything itself. It tells the collector which
// objects changed (by key) and answers Endpoints(key) from its informer
// caches; the collector does the queueing, hashing and publishing. That keeps
// every source level-based: whatever happened, the answer for a key is its
// whole current truth.
package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
)

// The annotation prefixes ExternalDNS users already write. Both are read
// everywhere an annotation is read (unless --annotation-prefix names
// another, see SetAnnotationPrefix); when both spell the same key, the
// alpha prefix wins.
const (
	AnnotationPrefixAlpha = "external-dns.alpha.kubernetes.io/"
	AnnotationPrefix      = "external-dns.kubernetes.io/"
)

// lastApplied is the annotation kubectl apply stores a full copy of the
// object in; never needed, often large.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Key names one object of a source: namespace (empty for cluster-scoped
// objects) and name.
type Key struct {
	Namespace string
	Name      string
}

func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// KeyOf returns the key of an object an informer handler was given,
// tombstones (cache.DeletedFinalStateUnknown) included.
func KeyOf(obj any) (Key, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		ns, name, err := cache.SplitMetaNamespaceKey(d.Key)
		return Key{Namespace: ns, Name: name}, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return Key{}, err
	}
	return Key{Namespace: m.GetNamespace(), Name: m.GetName()}, nil
}

// EnqueueObject returns an informer handler that enqueues the key of the
// object it is given.
func EnqueueObject(enqueue func(Key)) func(obj any) {
	return func(obj any) {
		if k, err := KeyOf(obj); err == nil {
			enqueue(k)
		}
	}
}

// Source turns one kind of Kubernetes object into endpoints.
type Source interface {
	// Name is the --source name, also the <source> token of the subjects
	// this source's objects are published under.
	Name() string
	// Register obtains the informers the source needs from factory and
	// installs their event handlers, before the factory is started. The
	// handlers call enqueue with the key of every object of this source
	// whose endpoints may have changed: the object itself on its own
	// add/update/delete, and the objects that depend on a dependent object
	// (a Pod, Node or EndpointSlice) when that one changes, typically found
	// through an informer index. The returned function reports whether the
	// handlers have seen every object of the initial list.
	Register(factory informers.SharedInformerFactory, enqueue func(Key)) (cache.InformerSynced, error)
	// Endpoints computes the complete set of endpoints the object wants now,
	// from the informer caches only. exists is false when the object is not
	// in the cache (deleted). An object that exists but is filtered out or
	// wants nothing returns exists=true and no endpoints. problems are bad
	// inputs that were skipped (usually *Problem); the endpoints are what
	// remained valid.
	Endpoints(key Key) (endpoints []events.Endpoint, exists bool, problems []error)
}

// ErrUnknown, among the problems Endpoints returns, says that the source
// cannot tell what the object wants right now (the crd source while its
// resource is not served, or before its informer has synced): the
// collector publishes nothing for the key, neither an update nor a
// tombstone, and reports nothing. No deletes from ignorance.
var ErrUnknown = errors.New("object state unknown: the source cannot see its objects yet")

// Runner is implemented by a source that runs something of its own beside
// the shared informer factory (the crd source: discovery polling, its own
// dynamic informer, status updates). The collector calls Run once per Run,
// after Register and after the factory has started; Run returns when ctx
// ends. The InformerSynced returned by Register must not report true
// before what Run does has settled enough to answer Endpoints.
type Runner interface {
	Run(ctx context.Context, rt Runtime)
}

// Runtime is what the collector hands a Runner.
type Runtime struct {
	// JS is the collector's JetStream connection.
	JS jetstream.JetStream
	// Enqueue asks for an object of this source to be (re)computed.
	Enqueue func(Key)
	// Resync enqueues every object of this source the collector has
	// published (and not tombstoned) before: after a source's view of its
	// objects went from unknown to known, so that the objects deleted
	// meanwhile get their tombstone.
	Resync func()
	Logger *slog.Logger
}

// Problem is a piece of bad input a source skipped: reported as a
// Kubernetes Warning event on Object, counted in a metric by Reason, logged.
type Problem struct {
	// Object is the object the event is recorded on (may be nil).
	Object runtime.Object
	// Reason is the event reason and the metric's reason label, CamelCase:
	// InvalidAnnotation, FQDNTemplateFailed, ...
	Reason string
	// Field names what was wrong: an annotation key, a flag.
	Field string
	Err   error
}

func (p *Problem) Error() string {
	if p.Field == "" {
		return p.Err.Error()
	}
	return fmt.Sprintf("%s: %v", p.Field, p.Err)
}

func (p *Problem) Unwrap() error { return p.Err }

// Filters are the object filters every Kubernetes source honours.
type Filters struct {
	// Labels selects objects by their labels (--label-filter).
	Labels labels.Selector
	// Annotations selects objects by their annotations, in label-selector
	// syntax (--annotation-filter).
	Annotations labels.Selector
}

// Matches reports whether an object with these labels and annotations passes.
func (f Filters) Matches(objLabels, objAnnotations map[string]string) bool {
	if f.Labels != nil && !f.Labels.Matches(labels.Set(objLabels)) {
		return false
	}
	if f.Annotations != nil && !f.Annotations.Matches(labels.Set(objAnnotations)) {
		return false
	}
	return true
}

// ParseFilters parses --label-filter and --annotation-filter.
func ParseFilters(labelFilter, annotationFilter string) (Filters, error) {
	var f Filters
	var err error
	if f.Labels, err = labels.Parse(labelFilter); err != nil {
		return f, fmt.Errorf("--label-filter %q: %w", labelFilter, err)
	}
	if f.Annotations, err = labels.Parse(annotationFilter); err != nil {
		return f, fmt.Errorf("--annotation-filter %q: %w", annotationFilter, err)
	}
	return f, nil
}

// AnnotationKeys returns the annotation keys the annotation filter looks
// at: the transform must keep them in the cache.
func (f Filters) AnnotationKeys() []string {
	if f.Annotations == nil {
		return nil
	}
	reqs, _ := f.Annotations.Requirements()
	keys := make([]string, 0, len(reqs))
	for _, r := range reqs {
		keys = append(keys, r.Key())
	}
	return keys
}

// Transform returns the informer transform every informer of a collector
// uses, to keep the caches small and the objects self-describing: it drops
// managedFields, the last-applied-configuration annotation and every
// annotation that is neither under an external-dns prefix nor one of keep
// (the keys the annotation filter needs), and restores the TypeMeta that
// informers strip, for FQDN templates, events and logs.
func Transform(keep ...string) cache.TransformFunc {
	keepSet := setOf(keep)
	return func(obj any) (any, error) {
		if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			return obj, nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return obj, nil
		}
		m.SetManagedFields(nil)
		if ann := m.GetAnnotations(); ann != nil {
			m.SetAnnotations(keepAnnotations(ann, keepSet))
		}
		if ro, ok := obj.(runtime.Object); ok && ro.GetObjectKind().GroupVersionKind().Kind == "" {
			if gvks, _, err := scheme.Scheme.ObjectKinds(ro); err == nil && len(gvks) > 0 {
				ro.GetObjectKind().SetGroupVersionKind(gvks[0])
			}
		}
		return obj, nil
	}
}

func keepAnnotations(ann map[string]string, keep map[string]bool) map[string]string {
	var kept map[string]string
	for k, v := range ann {
		if k == lastApplied {
			continue
		}
		if hasAnnotationPrefix(k) || keep[k] {
			if kept == nil {
				kept = make(map[string]string)
			}
			kept[k] = v
		}
	}
	return kept
}

// Annotation returns the value of an external-dns annotation given by its
// key without prefix ("hostname", "ttl", ...), under the prefixes read
// (AnnotationPrefixes); the first that has it wins: by default the alpha
// prefix when both are set.
func Annotation(annotations map[string]string, key string) (value, fullKey string, ok bool) {
	for _, p := range AnnotationPrefixes() {
		if v, ok := annotations[p+key]; ok {
			return v, p + key, true
		}
	}
	return "", "", false
}

// ListerEndpoints is Source.Endpoints for a source whose objects are in an
// informer cache: registered says Register has run (else the answer is an
// error naming the source), get reads the object from the cache and
// compute makes its endpoints. An object not found does not exist.
func ListerEndpoints[T any](name string, registered bool, get func() (T, error), compute func(T) ([]events.Endpoint, []error)) ([]events.Endpoint, bool, []error) {
	if !registered {
		return nil, false, []error{fmt.Errorf("%s source not registered", name)}
	}
	obj, err := get()
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, []error{err}
	}
	eps, problems := compute(obj)
	return eps, true, problems
}
