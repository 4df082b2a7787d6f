package crd

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
	"github.com/zonestream/zonestream/services/collector/source"
)

// StatusWriter sets status.observedGeneration of one object, through the
// status subresource.
type StatusWriter interface {
	SetObservedGeneration(ctx context.Context, namespace, name string, generation int64) error
}

// ObservedRecords answers whether some provider holds an endpoint's
// records: an RRset of the same name, type and set identifier with the
// same targets.
type ObservedRecords interface {
	Holds(ep events.Endpoint) bool
}

// Observed is an ObservedRecords fed from the observed stream: the last
// events.ObservedState of every provider and name.
type Observed struct {
	mu sync.RWMutex
	// byName holds, per name, the records of each subject (provider)
	// holding some: a short slice rather than a map, as a name is nearly
	// always held by one provider, and a map per name cost ten times the
	// bytes at every name of every zone.
	byName map[string][]heldAt
}

// heldAt is what the provider publishing on subject holds at a name.
type heldAt struct {
	subject string
	records []events.Endpoint
}

// NewObserved returns an empty Observed.
func NewObserved() *Observed {
	return &Observed{byName: make(map[string][]heldAt)}
}

// Set records the state published on subject (an empty one clears it).
func (o *Observed) Set(subject string, st *events.ObservedState) {
	name := events.NormalizeName(st.DNSName)
	recs := slices.Clone(st.Records)
	events.SortEndpoints(recs)
	o.mu.Lock()
	defer o.mu.Unlock()
	held := slices.DeleteFunc(o.byName[name], func(h heldAt) bool { return h.subject == subject })
	if len(recs) > 0 {
		held = append(held, heldAt{subject: subject, records: recs})
	}
	if len(held) == 0 {
		delete(o.byName, name)
		return
	}
	o.byName[name] = slices.Clip(held)
}

// Holds implements ObservedRecords.
func (o *Observed) Holds(ep events.Endpoint) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, h := range o.byName[ep.DNSName] {
		for _, r := range h.records {
			if r.RecordType == ep.RecordType && r.SetIdentifier == ep.SetIdentifier && slices.Equal(r.Targets, ep.Targets) {
				return true
			}
		}
	}
	return false
}

// Applied reports whether every endpoint is held by some provider.
func Applied(obs ObservedRecords, eps []events.Endpoint) bool {
	for _, ep := range eps {
		if !obs.Holds(ep) {
			return false
		}
	}
	return true
}

// dynamicStatus is the StatusWriter of a dynamic resource client: a merge
// patch of status.observedGeneration on the status subresource.
type dynamicStatus struct {
	client dynamic.NamespaceableResourceInterface
}

func (d dynamicStatus) SetObservedGeneration(ctx context.Context, namespace, name string, generation int64) error {
	patch := fmt.Appendf(nil, `{"status":{"observedGeneration":%d}}`, generation)
	_, err := d.client.Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// statusTracker sets status.observedGeneration = metadata.generation on a
// DNSEndpoint once every valid endpoint of that generation is in the
// observed state (some provider holds it with the same targets). It
// follows the observed stream (zs.observed.>) into an Observed; a
// DNSEndpoint is checked again when it changes and when an observed state
// arrives at one of its names.
type statusTracker struct {
	src      *Source
	writer   StatusWriter
	observed *Observed
	indexer  cache.Indexer
	logger   *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[source.Key]
}

// newStatusTracker returns a tracker whose queue takes keys at once; it
// works them once attach has given it the resource and its cache.
func newStatusTracker(src *Source) *statusTracker {
	return &statusTracker{
		src: src, observed: NewObserved(), logger: slog.Default(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[source.Key](100*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[source.Key]{Name: ""}),
	}
}

// attach gives the tracker the resource's client and cache, before run.
func (t *statusTracker) attach(client dynamic.NamespaceableResourceInterface, indexer cache.Indexer) {
	t.writer, t.indexer = dynamicStatus{client: client}, indexer
}

// pending reports whether the object's status lags its generation.
func pending(u *unstructured.Unstructured) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return og != u.GetGeneration()
}

// objectChanged is the informer handler: a DNSEndpoint whose status lags
// is checked.
func (t *statusTracker) objectChanged(obj any) {
	if k, ok := lagging(obj); ok {
		t.queue.Add(k)
	}
}

// lagging is the key of obj when it is a DNSEndpoint whose status lags
// its generation.
func lagging(obj any) (source.Key, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !pending(u) {
		return source.Key{}, false
	}
	return source.Key{Namespace: u.GetNamespace(), Name: u.GetName()}, true
}

// checkDelay is how long an observed state waits before the DNSEndpoints
// asking for its name are checked, with every state of that time: the
// names of an object of 100 endpoints arrive together, and each check
// reads the whole object.
const checkDelay = 500 * time.Millisecond

// observedChanged records an observed state and queues the lagging
// DNSEndpoints that ask for its name.
func (t *statusTracker) observedChanged(subject string, st *events.ObservedState) {
	t.observed.Set(subject, st)
	objs, err := t.indexer.ByIndex(indexDNSName, events.NormalizeName(st.DNSName))
	if err != nil {
		return
	}
	for _, o := range objs {
		if k, ok := lagging(o); ok {
			t.queue.AddAfter(k, checkDelay)
		}
	}
}

// run follows the observed stream and works the queue until ctx ends.
func (t *statusTracker) run(ctx context.Context, js jetstream.JetStream) {
	defer t.queue.ShutDown()
	go func() {
		<-ctx.Done()
		t.queue.ShutDown()
	}()
	go t.follow(ctx, js)
	for {
		k, shutdown := t.queue.Get()
		if shutdown {
			return
		}
		if err := t.check(ctx, k); err != nil && ctx.Err() == nil {
			t.logger.Warn("setting status.observedGeneration failed; retrying", "object", k.String(), "err", err)
			t.queue.AddRateLimited(k)
		} else {
			t.queue.Forget(k)
		}
		t.queue.Done(k)
	}
}

// follow watches zs.observed.> (replay, then live), retrying while the
// stream cannot be reached.
func (t *statusTracker) follow(ctx context.Context, js jetstream.JetStream) {
	if js == nil {
		return
	}
	backoff := &retry.Backoff{Base: 100 * time.Millisecond, Max: 30 * time.Second}
	for {
		_, err := events.Watch(ctx, js, events.StreamObserved, []string{events.SubjectObserved + ".>"}, func(r events.Received) {
			var st events.ObservedState
			if err := events.Decode(r, &st); err != nil {
				t.logger.Warn("undecodable observed state ignored", "subject", r.Subject, "err", err)
				return
			}
			t.observedChanged(r.Subject, &st)
		})
		if err == nil {
			return
		}
		delay := backoff.Next()
		t.logger.Warn("following the observed stream failed; retrying", "err", err, "in", delay)
		if !retry.Wait(ctx, delay) {
			return
		}
	}
}

// check sets the object's observedGeneration if its current generation is
// applied.
func (t *statusTracker) check(ctx context.Context, k source.Key) error {
	obj, exists, err := t.indexer.GetByKey(k.String())
	if err != nil || !exists {
		return err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !pending(u) {
		return nil
	}
	if !t.src.opts.Filters.Matches(u.GetLabels(), u.GetAnnotations()) {
		return nil // not ours
	}
	// The endpoints as the collector publishes them: with their default
	// targets.
	eps, _ := parseEndpoints(u, t.src.opts.DefaultTargets.Given())
	if !Applied(t.observed, t.src.opts.DefaultTargets.Apply(eps)) {
		return nil
	}
	gen := u.GetGeneration()
	err = t.writer.SetObservedGeneration(ctx, u.GetNamespace(), u.GetName(), gen)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		t.logger.Debug("status.observedGeneration set", "object", k.String(), "generation", gen)
	}
	return err
}
