// Package dedup turns what each Kubernetes object wants into what is wanted
// at each DNS name: one desired-state event per name, published only when
// its content changes. It reads the sources stream and writes the desired
// stream; its whole state is rebuilt from those two at every start.
package dedup

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/retry"
	"github.com/zonestream/zonestream/stage"
)

// Name is the dedup stage's name: its command, its identity for dead
// letters and its log attribute.
const Name = "dedup"

// Cluster policies: what happens when several clusters want one name.
const (
	// ClusterPolicyMerge unites the clusters' records: one name served by
	// all of them.
	ClusterPolicyMerge = "merge"
	// ClusterPolicyPriority gives the name to the best-ranked cluster alone.
	ClusterPolicyPriority = "priority"
)

// Config is dedup's configuration.
type Config struct {
	// SourcePriority ranks sources, best first (--source-priority).
	SourcePriority stage.StringList
	// ClusterPolicy is ClusterPolicyMerge or ClusterPolicyPriority (--cluster-policy).
	ClusterPolicy string
	// ClusterPriority ranks clusters, best first (--cluster-priority).
	ClusterPriority stage.StringList
	// Heartbeat is how often dedup renews its completeness mark
	// (--heartbeat-interval, shared with the collector; default
	// events.DefaultHeartbeat).
	Heartbeat time.Duration
}

// RegisterFlags adds dedup's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.SourcePriority, "source-priority",
		"sources in order of priority, best first (e.g. crd,ingress,service); when several sources want one name, "+
			"the best keeps it whole. Unlisted sources rank last. Repeatable or comma-separated")
	fs.StringVar(&c.ClusterPolicy, "cluster-policy", ClusterPolicyMerge,
		"when several clusters want one name: merge (serve the records of all of them) or "+
			"priority (the best cluster by --cluster-priority keeps the name alone)")
	fs.Var(&c.ClusterPriority, "cluster-priority",
		"clusters in order of priority, best first, for --cluster-policy=priority; unlisted clusters rank last, "+
			"ties go to the lower cluster name. Repeatable or comma-separated")
}

// Dedup is the dedup service.
type Dedup struct {
	cfg      Config
	rules    rules
	log      *slog.Logger
	caughtUp atomic.Bool
}

// New validates the configuration.
func New(cfg Config, logger *slog.Logger) (*Dedup, error) {
	if cfg.ClusterPolicy == "" {
		cfg.ClusterPolicy = ClusterPolicyMerge
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = events.DefaultHeartbeat
	}
	if cfg.Heartbeat < 0 {
		return nil, fmt.Errorf("--heartbeat-interval=%s: must be positive", cfg.Heartbeat)
	}
	if cfg.ClusterPolicy != ClusterPolicyMerge && cfg.ClusterPolicy != ClusterPolicyPriority {
		return nil, fmt.Errorf("--cluster-policy=%q: want %q or %q", cfg.ClusterPolicy, ClusterPolicyMerge, ClusterPolicyPriority)
	}
	return &Dedup{cfg: cfg, log: logger, rules: rules{
		sources:       newRanking(cfg.SourcePriority),
		clusters:      newRanking(cfg.ClusterPriority),
		mergeClusters: cfg.ClusterPolicy == ClusterPolicyMerge,
	}}, nil
}

// LeaseKey names the lease of which the holder is the one dedup at work:
// two would publish desired state and completeness marks over each other.
func (d *Dedup) LeaseKey() string { return events.DedupLease() }

// Ready reports whether dedup has replayed the sources stream.
func (d *Dedup) Ready() error {
	if !d.caughtUp.Load() {
		return errors.New("replaying the sources stream")
	}
	return nil
}

// Run follows the sources stream and publishes desired state until ctx ends.
func (d *Dedup) Run(ctx context.Context, js jetstream.JetStream) error {
	d.caughtUp.Store(false)
	caughtUpGauge.Set(0)
	r := d.newRun(js)
	if err := r.begin(ctx); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan events.Received, 1024)
	caughtUp, err := events.Watch(ctx, js, events.StreamSources, []string{events.SubjectSources + ".>"},
		func(m events.Received) {
			select {
			case msgs <- m:
			case <-ctx.Done():
			}
		})
	if err != nil {
		return err
	}
	// Marks count only when published after the watch began: ask every
	// collector for one now rather than wait up to a heartbeat.
	if err := events.RequestRenewal(js, events.RenewCollectorsSubject()); err != nil {
		d.log.Warn("asking the collectors to renew their marks failed; waiting for their heartbeats", "err", err)
	}
	// And answer a planner that asks the same of dedup.
	asked, unsubscribe, err := events.RenewalRequests(js, events.RenewCompleteSubject())
	if err != nil {
		d.log.Warn("not listening for renewal requests; the completeness mark is renewed every heartbeat only", "err", err)
	} else {
		defer unsubscribe()
	}
	again := time.NewTimer(0)
	<-again.C
	heartbeat := time.NewTicker(d.cfg.Heartbeat)
	defer heartbeat.Stop()
	// Doubles from 200ms to 30s, with jitter so that restarted services
	// don't retry in step.
	backoff := &retry.Backoff{Base: 200 * time.Millisecond, Max: 30 * time.Second, Jitter: true}
	for {
		reportLag(len(msgs), len(r.dirty))
		renew := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-msgs:
			r.fold(ctx, m)
		case <-caughtUp:
			caughtUp = nil
			// Watch hands over every replayed message before it reports
			// the replay done, so they are all in the buffer now.
			for len(msgs) > 0 {
				r.fold(ctx, <-msgs)
			}
			r.markAll()
			d.caughtUp.Store(true)
			caughtUpGauge.Set(1)
			d.log.Info("replayed sources", "objects", len(r.wanted.objects), "names", len(r.wanted.byName),
				"collectors", len(r.collectors.bySubject), "unknown", len(r.unknown))
		case <-heartbeat.C:
			renew = true
		case <-asked:
			renew = true
		case <-again.C:
		}
		if !d.caughtUp.Load() {
			continue
		}
		if err := r.flush(ctx, renew); err != nil {
			wait := backoff.Next()
			d.log.Warn("publishing desired state failed; retrying", "err", err, "in", wait, "pending", len(r.dirty))
			again.Reset(wait)
			continue
		}
		backoff.Reset()
	}
}

// begin readies the run before it reads a source: who must be synced, no
// completeness claimed, and what was published before.
func (r *run) begin(ctx context.Context) error {
	// Who had to be synced before still has to be, whatever the sources
	// stream holds now: read before the first mark of this run replaces
	// the last one.
	if err := r.inheritCollectors(ctx); err != nil {
		return fmt.Errorf("read the last completeness mark: %w", err)
	}
	// First of all, before any desired state of this run: whatever a
	// planner believed of the last run's completeness no longer holds.
	if err := r.publishComplete(ctx, false, "dedup restarted"); err != nil {
		return fmt.Errorf("withdraw completeness: %w", err)
	}
	published, err := readBack(ctx, r.js, r.log)
	if err != nil {
		return fmt.Errorf("read back desired state: %w", err)
	}
	r.published, r.reconnects = published, events.Reconnects(r.js)
	return nil
}

// run is the state of one Run.
type run struct {
	*Dedup
	id         string // this run, in its completeness marks
	js         jetstream.JetStream
	wanted     *wanted
	published  *published
	dirty      map[string]string // names to recompute -> event id that caused it
	collectors *collectors
	// unknown are the objects whose last message could not be taken in
	// and of which this run knows no earlier state: what they want is
	// unknown, so the names they held keep their published state.
	unknown map[string]events.ObjectRef // by source subject
	// awaited are the names kept as published until a collector syncs
	// or leaves (required.go).
	awaited map[string]struct{}
	// complete and reason are what the last completeness mark said;
	// markSeq is its sequence in the desired stream.
	complete bool
	reason   string
	markSeq  uint64
	// reconnects is the NATS reconnect count when published was read.
	reconnects uint64
	lastAck    *events.LastAck // the newest desired state acknowledged
}

func (d *Dedup) newRun(js jetstream.JetStream) *run {
	return &run{Dedup: d, id: nuid.Next(), js: js, wanted: newWanted(), dirty: map[string]string{},
		collectors: newCollectors(), unknown: map[string]events.ObjectRef{}, awaited: map[string]struct{}{}, reason: "dedup restarted",
		lastAck: events.NewLastAck(js, events.StreamDesired)}
}

func (r *run) fold(ctx context.Context, m events.Received) {
	switch markerOf(m.Subject) {
	case collectorMarker:
		r.foldCollector(ctx, m)
		return
	case claimMarker:
		r.foldClaim(ctx, m)
		return
	case otherMarker:
		return // a mark of another version
	}
	ref, err := events.ParseSourceSubject(m.Subject)
	var src events.SourceState
	if err == nil {
		err = events.Decode(m, &src)
	}
	if err != nil {
		r.reject(ctx, m, err)
		if _, known := r.wanted.objects[m.Subject]; !known && ref.Name != "" {
			// Skipped, not forgotten: an object this run knows keeps its
			// state; one it does not is unknown, never "wants nothing".
			r.unknown[m.Subject] = ref // its names are held at flush (held)
		}
		return
	}
	if _, was := r.unknown[m.Subject]; was {
		delete(r.unknown, m.Subject)
		r.log.Info("object known again", "subject", m.Subject)
		r.markNamesOf(ref, m.EventID())
	}
	for _, n := range r.wanted.set(m.Subject, src) {
		r.dirty[n] = m.EventID()
	}
}

func (r *run) foldCollector(ctx context.Context, m events.Received) {
	var cs events.CollectorState
	if err := events.Decode(m, &cs); err != nil {
		r.reject(ctx, m, err)
		return
	}
	if r.collectors.observe(m.Subject, cs, m.Live, time.Now()) {
		r.releaseAwaited()
	}
	if m.Live {
		r.log.Debug("collector mark", "cluster", cs.Cluster, "collector", cs.Collector, "phase", cs.Phase, "run", cs.Run)
	}
}

// foldClaim takes in a cluster's claim: released, it retires the cluster.
func (r *run) foldClaim(ctx context.Context, m events.Received) {
	var claim events.ClusterClaim
	if err := events.Decode(m, &claim); err != nil {
		r.reject(ctx, m, err)
		return
	}
	if r.collectors.claim(claim) {
		r.log.Info("cluster retired: its collectors no longer hold completeness", "cluster", claim.Cluster)
		r.releaseAwaited()
	}
}

// markAll schedules every name known either way: wanted now, or published
// before (which may need a tombstone).
func (r *run) markAll() {
	for _, n := range r.wanted.names() {
		if _, ok := r.dirty[n]; !ok {
			r.dirty[n] = ""
		}
	}
	for subj := range r.published.hashes {
		if events.IsMarker(subj) {
			continue
		}
		name, err := events.NameFromTokens(strings.TrimPrefix(subj, events.SubjectDesired+"."))
		if err != nil {
			r.log.Warn("desired subject with an undecodable name", "subject", subj, "err", err)
			continue
		}
		if _, ok := r.dirty[name]; !ok {
			r.dirty[name] = ""
		}
	}
}

// flush publishes the desired state of every dirty name whose content
// changed, then the completeness mark when it changed or renew asks. A
// name too large for the bus is reported and left with its last published
// state; it never holds back another name. Any other failure stops the
// flush: the bus is in trouble, and the names not acknowledged stay
// dirty. The states go out in chunks of flushChunk, each many in flight
// at once (events.PublishAll): a round trip per name bounded dedup to a
// few thousand names a second.
func (r *run) flush(ctx context.Context, renew bool) error {
	names := make([]string, 0, len(r.dirty))
	for n := range r.dirty {
		names = append(names, n)
	}
	slices.Sort(names)
	now := time.Now()
	debug := r.log.Enabled(ctx, slog.LevelDebug)
	var chunk []outgoing
	for _, name := range names {
		if r.held(name) {
			heldNames.Inc()
			delete(r.dirty, name)
			if debug {
				r.log.Debug("name held: an object holding its records is in an unknown state; its published state is kept", "name", name)
			}
			continue
		}
		if r.awaits(name, now) {
			delete(r.dirty, name)
			if debug {
				r.log.Debug("name awaits a collector's sync: an object holding its records is gone from the sources stream; its published state is kept", "name", name)
			}
			continue
		}
		d, enc, err := r.desired(name)
		if err != nil {
			return err
		}
		subject := events.DesiredSubject(name)
		prev, known := r.published.hashes[subject]
		if prev == enc.Hash() || !known && d.IsTombstone() {
			skipped.Inc()
			delete(r.dirty, name)
			if debug {
				r.log.Debug("desired state unchanged: not published", "name", name, "winners", refStrings(d.Contributors))
			}
			continue
		}
		msg, err := events.Message(subject, enc, r.dirty[name])
		if errors.Is(err, events.ErrTooLarge) {
			r.refuse(d, err)
			continue
		}
		if err != nil {
			return err
		}
		if chunk = append(chunk, outgoing{d, enc.Hash(), msg}); len(chunk) == flushChunk {
			if err := r.publishDesired(ctx, chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if err := r.publishDesired(ctx, chunk); err != nil {
		return err
	}
	namesGauge.Set(float64(len(r.wanted.byName)))
	awaitedGauge.Set(float64(len(r.awaited)))
	if renew && (r.lost(ctx) || r.reconnected(ctx)) {
		// Publish everything again before saying complete: otherwise a
		// planner would read an empty stream under a complete mark.
		return r.flush(ctx, false)
	}
	_, complete, reason := r.collectors.complete(r.wanted, time.Now())
	if renew || complete != r.complete || reason != r.reason {
		return r.publishComplete(ctx, complete, reason)
	}
	return nil
}

// desired computes what is wanted at name now, and encodes it: the
// content hash says whether it changed, and the same bytes are published.
func (r *run) desired(name string) (*events.DesiredState, *events.Encoded, error) {
	d := merge(name, r.wanted.contributions(name), r.published.holders[name], r.rules)
	enc, err := events.Encode(d)
	return d, enc, err
}

// flushChunk is how many desired states a flush builds before it sends
// them: enough to keep events.AsyncWindow in flight, few enough that a
// flush of every name holds a chunk's messages, not all of them.
const flushChunk = 4 * events.AsyncWindow

// outgoing is a desired state on its way to the bus.
type outgoing struct {
	d    *events.DesiredState
	hash string
	msg  *nats.Msg
}

// publishDesired publishes chunk and remembers each state acknowledged.
// It fails when the bus does (a state too large is refused instead).
func (r *run) publishDesired(ctx context.Context, chunk []outgoing) error {
	if len(chunk) == 0 {
		return nil
	}
	msgs := make([]*nats.Msg, len(chunk))
	for i, o := range chunk {
		msgs[i] = o.msg
	}
	var busErr error
	// PublishAll's error joins the final failures, which the callback
	// already took: the too large refused, the rest kept in busErr.
	_ = r.lastAck.PublishAll(ctx, msgs, func(i int, _ *jetstream.PubAck) {
		d := chunk[i].d
		r.remember(d, chunk[i].hash)
		delete(r.dirty, d.DNSName)
		publishedTotal.Inc()
		if r.log.Enabled(ctx, slog.LevelDebug) {
			logDecision(r.log, d)
		}
		if len(d.Losers) > 0 {
			losersTotal.Add(float64(len(d.Losers)))
			r.log.Info("objects lost records at a name", "name", d.DNSName, "winners", len(d.Contributors),
				"losers", len(d.Losers)+d.LosersOmitted, "first", d.Losers[0].Reason)
		}
	}, func(i int, err error, final bool) {
		switch {
		case errors.Is(err, events.ErrTooLarge):
			r.refuse(chunk[i].d, err)
		case final:
			publishErrors.Inc()
			busErr = err
		}
	})
	return cmp.Or(busErr, ctx.Err())
}

// refuse reports a desired state the bus will not take (too large): the
// name keeps its last published state, and is not tried again until it
// changes.
func (r *run) refuse(d *events.DesiredState, err error) {
	tooLarge.Inc()
	r.log.Error("desired state too large for the bus; the name keeps its last published state",
		"name", d.DNSName, "endpoints", len(d.Endpoints), "contributors", len(d.Contributors), "err", err)
	delete(r.dirty, d.DNSName)
}

// remember notes a desired state as published: its hash, to stay quiet
// until it changes, and its holders, for the next merge. A tombstone is
// forgotten: the name is gone, and so is what dedup kept of it.
func (r *run) remember(d *events.DesiredState, hash string) {
	subject := events.DesiredSubject(d.DNSName)
	if d.IsTombstone() {
		delete(r.published.hashes, subject)
	} else {
		r.published.hashes[subject] = hash
	}
	r.published.setHolders(d.DNSName, d.Holders)
}

// logDecision logs, at debug, which objects won name and which lost it,
// and why.
func logDecision(log *slog.Logger, d *events.DesiredState) {
	losers := make([]string, len(d.Losers))
	for i, l := range d.Losers {
		losers[i] = refString(l.Object) + ": " + l.Reason
	}
	attrs := []any{"name", d.DNSName, "endpoints", len(d.Endpoints), "winners", refStrings(d.Contributors), "losers", losers}
	if d.LosersOmitted > 0 {
		attrs = append(attrs, "losers_omitted", d.LosersOmitted)
	}
	if d.IsTombstone() {
		log.Debug("desired state published: no object wants the name any more", attrs...)
		return
	}
	log.Debug("desired state published", attrs...)
}

// refStrings names objects for a log line: cluster/source/namespace/name.
func refStrings(refs []events.ObjectRef) []string {
	out := make([]string, len(refs))
	for i, o := range refs {
		out[i] = refString(o)
	}
	return out
}
