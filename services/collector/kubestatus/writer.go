package kubestatus

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"

	"github.com/zonestream/zonestream/events"
)

// ReportingController names the collector in the Events it writes.
const ReportingController = "zonestream.io/collector"

// Event rate limit, over every object: a flapping name costs a few
// writes, never a flood (the recorder also folds repeats into a series).
const (
	eventQPS   = 5
	eventBurst = 50
	eventQueue = 1024
)

// Kube is the Sink that writes to the API server: Events through
// client-go's events.k8s.io recorder, the Ready condition with an update
// of the status subresource. A failed write is counted
// (zonestream_collector_kube_status_errors_total) and logged; it never
// holds up the DNS work.
type Kube struct {
	logger    *slog.Logger
	reference func(events.ObjectRef) *corev1.ObjectReference
	outcomes  func(events.ObjectRef) map[string]Outcome

	meta        metadata.Interface
	dyn         dynamic.Interface
	mapper      *restmapper.DeferredDiscoveryRESTMapper
	broadcaster kevents.EventBroadcaster
	recorder    kevents.EventRecorder
	limiter     flowcontrol.RateLimiter

	events     chan pendingEvent
	conditions workqueue.TypedRateLimitingInterface[events.ObjectRef]
	// cached reads an object from the collector's informer cache; nil, or
	// false, when it has none.
	cached func(events.ObjectRef) (*unstructured.Unstructured, bool)
	// uids remembers the UID of objects found (written by emit only), so
	// that the Event about an object already deleted still names it.
	uids map[events.ObjectRef]types.UID
}

// maxUIDs bounds the UIDs remembered.
const maxUIDs = 1 << 16

type pendingEvent struct {
	obj     events.ObjectRef
	name    string
	outcome Outcome
}

// NewKube returns a Kube writing with rc. reference gives an object's
// apiVersion and kind; outcomes is Status.Outcomes.
func NewKube(rc *rest.Config, client kubernetes.Interface, reference func(events.ObjectRef) *corev1.ObjectReference,
	outcomes func(events.ObjectRef) map[string]Outcome, logger *slog.Logger, opts ...KubeOption) (*Kube, error) {
	md, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	k := &Kube{logger: logger, reference: reference, outcomes: outcomes, meta: md, dyn: dyn,
		mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())),
		limiter: flowcontrol.NewTokenBucketRateLimiter(eventQPS, eventBurst),
		events:  make(chan pendingEvent, eventQueue),
		uids:    map[events.ObjectRef]types.UID{},
		conditions: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[events.ObjectRef](200*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[events.ObjectRef]{}),
	}
	for _, o := range opts {
		o(k)
	}
	k.broadcaster = kevents.NewBroadcaster(countingSink{k: k, sink: &kevents.EventSinkImpl{Interface: client.EventsV1()}})
	k.recorder = k.broadcaster.NewRecorder(scheme.Scheme, ReportingController)
	return k, nil
}

// KubeOption configures a Kube.
type KubeOption func(*Kube)

// WithCache has Kube read objects from cached (the collector's informer
// cache, whose copies it does not change) before it asks the API server:
// a GET of the whole object before each update doubled the requests of
// every condition written.
func WithCache(cached func(events.ObjectRef) (*unstructured.Unstructured, bool)) KubeOption {
	return func(k *Kube) { k.cached = cached }
}

// Event implements Sink: queued, never blocking; dropped and counted
// when the queue is full.
func (k *Kube) Event(obj events.ObjectRef, name string, o Outcome) {
	select {
	case k.events <- pendingEvent{obj, name, o}:
	default:
		eventsDropped.Inc()
	}
}

// ConditionDelay is how long a change of an object's outcome waits before
// its Ready condition is written, with every change of that time. While an
// object's names converge (a DNSEndpoint of 100 names changes outcome 100
// times in a few seconds, first to pending, then to published) it is
// written once or twice rather than once per change: each write is an
// update of the whole object, validated and tracked by the API server.
const ConditionDelay = time.Second

// Condition implements Sink: obj's condition is written ConditionDelay
// after the first change not written yet.
func (k *Kube) Condition(obj events.ObjectRef) { k.conditions.AddAfter(obj, ConditionDelay) }

// Run writes until ctx ends.
func (k *Kube) Run(ctx context.Context) {
	if err := k.broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		k.logger.Error("kubernetes events cannot be recorded", "err", err)
	}
	defer k.broadcaster.Shutdown()
	go func() {
		<-ctx.Done()
		k.conditions.ShutDown()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for k.nextCondition(ctx) {
		}
	}()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case e := <-k.events:
			k.emit(ctx, e)
		}
	}
}

// emit records one Event on its object, found by name for its UID (so
// that kubectl describe shows it); an object already gone gets it too.
func (k *Kube) emit(ctx context.Context, e pendingEvent) {
	warning, reason, action, ok := EventOf(e.outcome)
	if !ok {
		return
	}
	if !k.limiter.TryAccept() {
		eventsDropped.Inc()
		return
	}
	ref := k.reference(e.obj)
	if gvr, err := k.resource(ref); err == nil {
		m, err := k.meta.Resource(gvr).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			ref.UID, ref.ResourceVersion = m.UID, m.ResourceVersion
			k.rememberUID(e.obj, m.UID)
		case apierrors.IsNotFound(err) && e.outcome.State == Held:
			return // a held delete is news only to an object that still exists
		case apierrors.IsNotFound(err):
			ref.UID = k.uids[e.obj]
			delete(k.uids, e.obj)
		default:
			k.failed("lookup", e.obj, err)
		}
	} else {
		k.failed("lookup", e.obj, err)
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	eventsEmitted.WithLabelValues(reason).Inc()
	k.recorder.Eventf(ref, nil, typ, reason, action, "%s", e.outcome.Describe(e.name))
}

func (k *Kube) rememberUID(obj events.ObjectRef, uid types.UID) {
	if _, ok := k.uids[obj]; !ok && len(k.uids) >= maxUIDs {
		for o := range k.uids {
			delete(k.uids, o) // any one: a bound, not a cache policy
			break
		}
	}
	k.uids[obj] = uid
}

func (k *Kube) resource(ref *corev1.ObjectReference) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	m, err := k.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		k.mapper.Reset() // a CRD installed since discovery was cached
		m, err = k.mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	}
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
}

// failed counts and logs a write that did not happen.
func (k *Kube) failed(what string, obj events.ObjectRef, err error) {
	writeErrors.WithLabelValues(what).Inc()
	k.logger.Warn("writing object status to Kubernetes failed; DNS work goes on", "what", what,
		"object", obj.Resource(), "forbidden", apierrors.IsForbidden(err), "err", err)
}

// countingSink counts the recorder's failed writes.
type countingSink struct {
	k    *Kube
	sink kevents.EventSink
}

func (c countingSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return c.count(e)(c.sink.Create(ctx, e))
}

func (c countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return c.count(e)(c.sink.Update(ctx, e))
}

func (c countingSink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return c.count(e)(c.sink.Patch(ctx, e, data))
}

func (c countingSink) count(e *eventsv1.Event) func(*eventsv1.Event, error) (*eventsv1.Event, error) {
	return func(out *eventsv1.Event, err error) (*eventsv1.Event, error) {
		if err != nil {
			ref := events.ObjectRef{Source: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name}
			c.k.failed("event", ref, fmt.Errorf("%s: %w", e.Reason, err))
		}
		return out, err
	}
}
