package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
	"github.com/zonestream/zonestream/services/collector/source"
)

const (
	// publishTimeout bounds one publish; a failed publish is retried.
	publishTimeout = 10 * time.Second
	// Retry backoff per object (publish) and for the start-up read-back.
	retryBase = 100 * time.Millisecond
	retryMax  = 30 * time.Second
)

// item is one unit of work: an object of a source.
type item struct {
	source string
	key    source.Key
}

// run is the state of one Run; nothing of it survives a restart except
// what is on the stream.
type run struct {
	c        *Collector
	js       jetstream.JetStream
	logger   *slog.Logger
	sources  map[string]source.Source
	queue    workqueue.TypedRateLimitingInterface[item]
	recorder record.EventRecorder

	mu     sync.Mutex
	mark   *mark
	hashes map[string]string // subject -> content hash last published
	counts endpointCounts
	// reconnects is the NATS reconnect count when hashes were read back.
	reconnects uint64
	lastAck    *events.LastAck   // the newest object state or mark acknowledged
	problems   map[string]string // subject -> problems last reported
	synced     bool
	// pending: before sync, every item enqueued; after sync, the items the
	// first pass has yet to process. nil once the first pass is done.
	pending map[item]bool
}

// Run watches the cluster and publishes until ctx ends, then returns
// ctx.Err(). It may be called again once it has returned. A run whose
// state vanished from the stream (errStreamLost) is followed by a new one.
func (c *Collector) Run(ctx context.Context, js jetstream.JetStream) error {
	if !c.runMu.TryLock() {
		return errors.New("collector: Run is already running")
	}
	defer c.runMu.Unlock()
	defer c.setReady(errors.New("not running"))
	for {
		err := c.runOnce(ctx, js)
		if !errors.Is(err, errStreamLost) || ctx.Err() != nil {
			return err
		}
	}
}

// runOnce is one run: it says so on the bus, watches the cluster until
// the informers are synced, then publishes every object (and a tombstone
// for each one gone since the last run) until ctx ends or the run's state
// is lost.
func (c *Collector) runOnce(parent context.Context, js jetstream.JetStream) error {
	c.setReady(errors.New("reading back published state"))
	sources, err := c.buildSources()
	if err != nil {
		return err
	}
	r := c.newRun(js, sources)
	defer r.queue.ShutDown()

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	if err := r.begin(ctx); err != nil {
		return err
	}

	factory := informers.NewSharedInformerFactoryWithOptions(c.client, 0,
		informers.WithNamespace(c.cfg.Namespace),
		informers.WithTransform(source.Transform(c.filters.AnnotationKeys()...)))
	syncs, err := r.register(factory)
	if err != nil {
		return err
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	r.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "zonestream-collector"})

	var workers sync.WaitGroup
	defer func() {
		cancel(nil)
		r.queue.ShutDown()
		workers.Wait()
		factory.Shutdown()
		broadcaster.Shutdown()
	}()
	workers.Go(func() { r.heartbeat(ctx, cancel) })

	c.setReady(errors.New("waiting for informers to sync"))
	factory.Start(ctx.Done())
	r.startRunners(ctx, &workers)
	if r.followsOutcomes() {
		workers.Go(func() { r.followOutcomes(ctx) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return r.ended(ctx)
	}
	r.startFirstPass(ctx)
	for range c.cfg.Workers {
		workers.Go(func() {
			for r.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	return r.ended(ctx)
}

func (c *Collector) newRun(js jetstream.JetStream, sources map[string]source.Source) *run {
	r := &run{
		c: c, js: js, logger: c.logger.With("cluster", c.cfg.ClusterName), sources: sources,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[item](retryBase, retryMax),
			workqueue.TypedRateLimitingQueueConfig[item]{}),
		problems: make(map[string]string),
		pending:  make(map[item]bool),
		lastAck:  events.NewLastAck(js, events.StreamSources),
	}
	r.mark = r.newMark()
	return r
}

// begin makes the run known before it reads any object. This cluster's
// name must be ours, and dedup must hear that this run is syncing before
// it sees any object of it: until it says "synced", nothing may be
// deleted for want of this collector's objects. Then it reads back what
// this cluster's collector published before: the baseline for
// hash-skipping and the candidates for tombstones.
func (r *run) begin(ctx context.Context) error {
	if err := r.claimClusterName(ctx); err != nil {
		return err
	}
	if err := r.announce(ctx, events.PhaseSyncing); err != nil {
		return err
	}
	if err := r.retireOverlapping(ctx); err != nil {
		return fmt.Errorf("retiring superseded collector marks: %w", err)
	}
	r.reconnects = events.Reconnects(r.js)
	var err error
	if r.hashes, err = r.readBack(ctx); err != nil {
		return err
	}
	r.logger.Info("read back published state", "subjects", len(r.hashes), "run", r.mark.state.Run)
	return nil
}

// register has every source watch its objects through factory, queueing
// each change; it returns what tells that the caches are synced.
func (r *run) register(factory informers.SharedInformerFactory) ([]cache.InformerSynced, error) {
	var syncs []cache.InformerSynced
	for name, s := range r.sources {
		synced, err := s.Register(factory, func(k source.Key) { r.enqueue(item{source: name, key: k}) })
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", name, err)
		}
		syncs = append(syncs, synced)
	}
	return syncs, nil
}

// startRunners starts the sources that also watch something other than
// informers (source.Runner).
func (r *run) startRunners(ctx context.Context, workers *sync.WaitGroup) {
	for name, s := range r.sources {
		runner, ok := s.(source.Runner)
		if !ok {
			continue
		}
		rt := source.Runtime{
			JS:      r.js,
			Enqueue: func(k source.Key) { r.enqueue(item{source: name, key: k}) },
			Resync:  func() { r.resync(name) },
			Logger:  r.logger.With("source", name),
		}
		workers.Go(func() { runner.Run(ctx, rt) })
	}
}

// startFirstPass: synced, from now on tombstones are allowed. The first
// pass is every object in the caches plus every subject published before,
// so that objects deleted while no collector ran get their tombstone.
func (r *run) startFirstPass(ctx context.Context) {
	r.mu.Lock()
	r.synced = true
	for subject := range r.hashes {
		it, ok := r.itemOf(subject)
		if !ok {
			continue
		}
		r.pending[it] = true
		r.queue.Add(it)
	}
	n := len(r.pending)
	if n == 0 {
		r.pending = nil
	}
	r.mu.Unlock()
	r.logger.Info("informers synced", "first-pass", n)
	if n == 0 {
		r.firstPassDone(ctx)
	} else {
		r.c.setReady(fmt.Errorf("first publish pass: %d objects to go", n))
	}
}

// resync enqueues every object of source name that was published before
// (read back at start or published by this run).
func (r *run) resync(name string) {
	r.mu.Lock()
	subjects := make([]string, 0, len(r.hashes))
	for subject := range r.hashes {
		subjects = append(subjects, subject)
	}
	r.mu.Unlock()
	for _, subject := range subjects {
		if it, ok := r.itemOf(subject); ok && it.source == name {
			r.enqueue(it)
		}
	}
}

func (r *run) enqueue(it item) {
	r.mu.Lock()
	if !r.synced {
		r.pending[it] = true
	}
	r.mu.Unlock()
	r.queue.Add(it)
}

// itemOf maps a subject read back from the stream to the object it is
// about. Subjects of sources this collector does not run, or of namespaced
// objects outside its namespace, belong to some other collector of the
// cluster: left alone.
func (r *run) itemOf(subject string) (item, bool) {
	if events.IsMarker(subject) {
		return item{}, false
	}
	prefix := strings.TrimSuffix(events.SourceFilter(r.c.cfg.ClusterName), ">")
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return item{}, false
	}
	tokens := strings.Split(rest, ".")
	if len(tokens) != 3 {
		r.logger.Warn("ignoring subject of unexpected shape", "subject", subject)
		return item{}, false
	}
	var parts [3]string
	for i, t := range tokens {
		v, err := events.UnescapeToken(t)
		if err != nil {
			r.logger.Warn("ignoring undecodable subject", "subject", subject, "err", err)
			return item{}, false
		}
		parts[i] = v
	}
	if _, ok := r.sources[parts[0]]; !ok {
		return item{}, false
	}
	// Cluster-scoped objects (Nodes) have no namespace and are watched
	// whatever --namespace says.
	if ns := r.c.cfg.Namespace; ns != "" && parts[1] != ns && parts[1] != "" {
		return item{}, false
	}
	it := item{source: parts[0], key: source.Key{Namespace: parts[1], Name: parts[2]}}
	if r.ref(it).Subject() != subject {
		return item{}, false
	}
	return it, true
}

func (r *run) ref(it item) events.ObjectRef {
	return events.ObjectRef{Cluster: r.c.cfg.ClusterName, Source: it.source, Namespace: it.key.Namespace, Name: it.key.Name}
}

// readBack returns the last hash of every subject this cluster's collector
// published, retrying with backoff while NATS is unreachable.
func (r *run) readBack(ctx context.Context) (map[string]string, error) {
	backoff := &retry.Backoff{Base: retryBase, Max: retryMax}
	for {
		hashes, err := events.LastHashes(ctx, r.js, events.StreamSources, events.SourceFilter(r.c.cfg.ClusterName))
		if err == nil {
			return hashes, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		publishErrors.Inc()
		delay := backoff.Next()
		r.logger.Warn("reading back published state failed; retrying", "err", err, "in", delay)
		if !retry.Wait(ctx, delay) {
			return nil, ctx.Err()
		}
	}
}

func (r *run) processNext(ctx context.Context) bool {
	it, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(it)
	if err := r.process(ctx, it); err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.logger.Warn("publish failed; retrying", "source", it.source, "object", it.key.String(), "err", err,
			"attempt", r.queue.NumRequeues(it)+1)
		r.queue.AddRateLimited(it)
		return true
	}
	r.queue.Forget(it)
	r.mu.Lock()
	if r.synced && r.pending != nil {
		delete(r.pending, it)
		if len(r.pending) == 0 {
			r.pending = nil
			r.mu.Unlock()
			r.logger.Info("first publish pass done")
			r.firstPassDone(ctx)
			return true
		}
	}
	r.mu.Unlock()
	return true
}

// process computes one object's state and publishes it if it changed.
func (r *run) process(ctx context.Context, it item) error {
	src := r.sources[it.source]
	eps, exists, problems := src.Endpoints(it.key)
	// In ExternalDNS' order: default targets, NAT64, the target filter,
	// PTR records, then --prefer-alias.
	eps = source.PreferAlias(r.c.cfg.PreferAlias).Apply(r.c.ptr.Apply(r.c.targets.Filter(r.c.nat64.Add(r.c.defaults.Apply(eps)))))
	ref := r.ref(it)
	subject := ref.Subject()
	if r.unknown(it, problems) {
		return nil
	}
	r.report(it, subject, problems)

	state := &events.SourceState{Object: ref, Endpoints: eps}
	enc, err := events.Encode(state)
	if err != nil || !r.toPublish(it, subject, state, enc.Hash(), exists, len(problems) > 0) {
		return err
	}
	return r.publish(ctx, it, subject, state, enc, exists)
}

// unknown reports whether the source cannot see the object now
// (source.ErrUnknown among its problems): then nothing is published, above
// all no tombstone. A cause beyond the bare sentinel (a resolver timing
// out) is worth an operator's attention; the bare one (a CRD not
// installed) is not.
func (r *run) unknown(it item, problems []error) bool {
	for _, p := range problems {
		if !errors.Is(p, source.ErrUnknown) {
			continue
		}
		if p == source.ErrUnknown {
			r.logger.Debug("object state unknown; nothing published", "source", it.source, "object", it.key.String())
		} else {
			stateUnknown.WithLabelValues(it.source).Inc()
			sourceErrors.Inc()
			r.logger.Warn("object state unknown; last published state kept", "source", it.source, "object", it.key.String(), "err", p)
		}
		return true
	}
	return false
}

// toPublish reports whether state, of content hash hash, is to be
// published: not when it is what was last published, a tombstone of what
// never was, or the tombstone of an object that exists but has only
// invalid input.
func (r *run) toPublish(it item, subject string, state *events.SourceState, hash string, exists, invalid bool) bool {
	r.mu.Lock()
	last, had := r.hashes[subject]
	r.mu.Unlock()
	if had && last == hash {
		publishSkipped.WithLabelValues(it.source).Inc()
		r.counts.set(subject, state.Endpoints)
		if r.logger.Enabled(context.Background(), slog.LevelDebug) {
			r.logger.Debug("skipped: endpoints unchanged since last published", "source", it.source,
				"object", it.key.String(), "endpoints", endpointNames(state.Endpoints))
		}
		return false
	}
	if !had && state.IsTombstone() {
		// Never published anything: nothing to take back.
		if r.logger.Enabled(context.Background(), slog.LevelDebug) {
			r.logger.Debug("skipped: no endpoints, and none published before", "source", it.source,
				"object", it.key.String(), "exists", exists)
		}
		return false
	}
	if exists && state.IsTombstone() && invalid {
		// Bad input alone never takes an object's records away: an object
		// left with no valid endpoint keeps its last published state
		// until it is fixed (or deleted).
		r.logger.Warn("object has only invalid input; keeping its last published state",
			"source", it.source, "object", it.key.String())
		return false
	}
	return true
}

// publish publishes the object's state and records its hash; an object
// too large for the bus is reported, on the object too, and keeps its last
// published state.
func (r *run) publish(ctx context.Context, it item, subject string, state *events.SourceState, enc *events.Encoded, exists bool) error {
	eps := state.Endpoints
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	published, _, err := r.lastAck.Publish(pctx, subject, enc, "")
	if errors.Is(err, events.ErrTooLarge) {
		// Retrying cannot help until the object shrinks: said once, on the
		// object too, and the object keeps its last published state.
		tooLarge.WithLabelValues(it.source).Inc()
		r.logger.Error("object too large for the bus; its last published state is kept", "source", it.source,
			"object", it.key.String(), "endpoints", len(eps), "err", err)
		r.recorder.Eventf(r.reference(it), corev1.EventTypeWarning, "TooLarge",
			"%d endpoints do not fit in one message on the bus (%v); the records last published for this object are kept", len(eps), err)
		return nil
	}
	if err != nil {
		publishErrors.Inc()
		return err
	}
	r.mu.Lock()
	if state.IsTombstone() {
		delete(r.hashes, subject) // gone: nothing more to compare it with
	} else {
		r.hashes[subject] = published
	}
	r.mu.Unlock()
	r.counts.set(subject, eps)
	kind := "update"
	if state.IsTombstone() {
		kind = "tombstone"
	}
	objectsPublished.WithLabelValues(it.source, kind).Inc()
	if r.logger.Enabled(ctx, slog.LevelDebug) {
		r.logger.Debug("published", "source", it.source, "object", it.key.String(), "subject", subject, "kind", kind,
			"exists", exists, "endpoints", endpointNames(eps), "hash", published)
	}
	return nil
}

// endpointNames is eps for a debug line: name, type and targets of each.
func endpointNames(eps []events.Endpoint) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.DNSName + " " + e.RecordType + " " + strings.Join(e.Targets, ",")
	}
	return out
}

// report turns the problems a source found into events, metrics and log
// lines, once per distinct set of problems of an object.
func (r *run) report(it item, subject string, problems []error) {
	var sig strings.Builder
	for _, p := range problems {
		sig.WriteString(p.Error())
		sig.WriteByte('\n')
	}
	r.mu.Lock()
	same := r.problems[subject] == sig.String()
	if len(problems) == 0 {
		delete(r.problems, subject)
	} else {
		r.problems[subject] = sig.String()
	}
	r.mu.Unlock()
	if same {
		return
	}
	for _, err := range problems {
		reason := "Error"
		var p *source.Problem
		if errors.As(err, &p) {
			reason = p.Reason
			if p.Object != nil {
				r.recorder.Event(p.Object, corev1.EventTypeWarning, p.Reason, p.Error())
			}
		}
		invalidInput.WithLabelValues(it.source, reason).Inc()
		sourceErrors.Inc()
		r.logger.Warn("invalid input skipped", "source", it.source, "object", it.key.String(), "reason", reason, "err", err)
	}
}
