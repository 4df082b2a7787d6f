// Package dedup turns what each Kubernetes object wants into what is wanted
// at each DNS name: one desired-state event per name, published only when
// its content changes. It reads the sources stream and writes the desired
// stream; its whole state is rebuilt from those two at every start.
package dedup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
)

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
	SourcePriority service.StringList
	// ClusterPolicy is ClusterPolicyMerge or ClusterPolicyPriority (--cluster-policy).
	ClusterPolicy string
	// ClusterPriority ranks clusters, best first (--cluster-priority).
	ClusterPriority service.StringList
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
	if cfg.ClusterPolicy != ClusterPolicyMerge && cfg.ClusterPolicy != ClusterPolicyPriority {
		return nil, fmt.Errorf("--cluster-policy=%q: want %q or %q", cfg.ClusterPolicy, ClusterPolicyMerge, ClusterPolicyPriority)
	}
	return &Dedup{cfg: cfg, log: logger, rules: rules{
		sources:       newRanking(cfg.SourcePriority),
		clusters:      newRanking(cfg.ClusterPriority),
		mergeClusters: cfg.ClusterPolicy == ClusterPolicyMerge,
	}}, nil
}

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
	published, err := readBack(ctx, js, d.log)
	if err != nil {
		return fmt.Errorf("read back desired state: %w", err)
	}
	r := d.newRun(js, published)

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
	retry := time.NewTimer(0)
	<-retry.C
	backoff := newBackoff()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-msgs:
			r.apply(ctx, m)
		case <-caughtUp:
			caughtUp = nil
			// Watch hands over every replayed message before it reports
			// the replay done, so they are all in the buffer now.
			for len(msgs) > 0 {
				r.apply(ctx, <-msgs)
			}
			r.markAll()
			d.caughtUp.Store(true)
			caughtUpGauge.Set(1)
			d.log.Info("replayed sources", "objects", len(r.state.objects), "names", len(r.state.byName))
		case <-retry.C:
		}
		if !d.caughtUp.Load() {
			continue
		}
		if err := r.flush(ctx); err != nil {
			wait := backoff.next()
			d.log.Warn("publishing desired state failed; retrying", "err", err, "in", wait, "pending", len(r.dirty))
			retry.Reset(wait)
			continue
		}
		backoff.reset()
	}
}

// run is the state of one Run.
type run struct {
	*Dedup
	js        jetstream.JetStream
	state     *state
	published *published
	dirty     map[string]string // names to recompute -> event id that caused it
	// clusters maps every cluster seen on the sources stream to whether
	// its collector has said it synced.
	clusters map[string]bool
}

func (d *Dedup) newRun(js jetstream.JetStream, p *published) *run {
	return &run{Dedup: d, js: js, state: newState(), published: p, dirty: map[string]string{},
		clusters: map[string]bool{}}
}

func (r *run) apply(ctx context.Context, m events.Received) {
	if events.SchemaOf(m.Header) == (&events.SourcesSynced{}).Schema().String() {
		var synced events.SourcesSynced
		if err := events.Unmarshal(m.Header, m.Data, &synced); err == nil {
			r.clusters[synced.Cluster] = true
			return
		}
	}
	var src events.SourceState
	if err := events.Unmarshal(m.Header, m.Data, &src); err != nil {
		// Skipped, not forgotten: the object's previous state stays, so a
		// garbage message can never delete a record.
		deadLetters.Inc()
		r.log.Error("undecodable source event; parked on the dead-letter subject", "subject", m.Subject, "err", err)
		if err := events.DeadLetter(ctx, r.js, "dedup", m, err); err != nil {
			r.log.Error("dead-letter publish failed", "err", err)
		}
		return
	}
	if _, seen := r.clusters[src.Object.Cluster]; !seen {
		r.clusters[src.Object.Cluster] = false
	}
	for _, n := range r.state.set(m.Subject, src) {
		r.dirty[n] = m.EventID()
	}
}

// complete reports whether every cluster seen has synced: only then does
// the desired state hold everything that is wanted.
func (r *run) complete() ([]string, bool) {
	var synced []string
	for c, ok := range r.clusters {
		if !ok {
			return nil, false
		}
		synced = append(synced, c)
	}
	slices.Sort(synced)
	return synced, len(synced) > 0
}

// publishComplete marks the desired stream complete, after every desired
// state it has to publish, so a reader that sees the mark has them all.
func (r *run) publishComplete(ctx context.Context) error {
	clusters, ok := r.complete()
	if !ok {
		return nil
	}
	mark := &events.DesiredComplete{Clusters: clusters}
	subject := events.DesiredCompleteSubject()
	hash, err := events.HashOf(mark)
	if err != nil || hash == r.published.hashes[subject] {
		return err
	}
	if _, _, err := events.Publish(ctx, r.js, subject, mark, ""); err != nil {
		publishErrors.Inc()
		return err
	}
	r.published.hashes[subject] = hash
	r.log.Info("desired state complete", "clusters", clusters)
	return nil
}

// markAll schedules every name known either way: wanted now, or published
// before (which may need a tombstone).
func (r *run) markAll() {
	for _, n := range r.state.names() {
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
// changed. Names that fail stay dirty.
func (r *run) flush(ctx context.Context) error {
	if len(r.dirty) == 0 {
		return r.publishComplete(ctx)
	}
	names := make([]string, 0, len(r.dirty))
	for n := range r.dirty {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		d, hash, err := r.desired(name)
		if err != nil {
			return err
		}
		subject := events.DesiredSubject(name)
		prev, known := r.published.hashes[subject]
		if prev == hash || !known && len(d.Endpoints) == 0 && len(d.Losers) == 0 {
			skipped.Inc()
			delete(r.dirty, name)
			continue
		}
		if _, _, err := events.Publish(ctx, r.js, subject, d, r.dirty[name]); err != nil {
			publishErrors.Inc()
			return err
		}
		r.remember(d, hash)
		delete(r.dirty, name)
		publishedTotal.Inc()
		if len(d.Losers) > 0 {
			losersTotal.Add(float64(len(d.Losers)))
			r.log.Info("objects lost records at a name", "name", name, "winners", len(d.Contributors),
				"losers", len(d.Losers), "first", d.Losers[0].Reason)
		}
	}
	namesGauge.Set(float64(len(r.state.byName)))
	return r.publishComplete(ctx)
}

// desired computes what is wanted at name now, and its content hash.
func (r *run) desired(name string) (*events.DesiredState, string, error) {
	d := merge(name, r.state.contributions(name), r.published.owners[name], r.rules)
	hash, err := events.HashOf(d)
	return d, hash, err
}

// remember notes a desired state as published: its hash, to stay quiet
// until it changes, and its owners, for the next merge.
func (r *run) remember(d *events.DesiredState, hash string) {
	r.published.hashes[events.DesiredSubject(d.DNSName)] = hash
	r.published.setOwners(d.DNSName, d.Owners)
}
