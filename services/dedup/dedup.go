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

// Config is dedup's configuration.
type Config struct {
	// SourcePriority ranks sources, best first (--source-priority).
	SourcePriority service.StringList
}

// RegisterFlags adds dedup's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.SourcePriority, "source-priority",
		"sources in order of priority, best first (e.g. crd,ingress,service); when several sources want one name, "+
			"the best keeps it whole. Unlisted sources rank last. Repeatable or comma-separated")
}

// Dedup is the dedup service.
type Dedup struct {
	cfg      Config
	rank     ranking
	log      *slog.Logger
	caughtUp atomic.Bool
}

// New validates the configuration.
func New(cfg Config, logger *slog.Logger) (*Dedup, error) {
	return &Dedup{cfg: cfg, rank: newRanking(cfg.SourcePriority), log: logger}, nil
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
	published, err := events.LastHashes(ctx, js, events.StreamDesired, events.SubjectDesired+".>")
	if err != nil {
		return fmt.Errorf("read back desired state: %w", err)
	}
	r := &run{Dedup: d, js: js, state: newState(), published: published, dirty: map[string]string{},
		clusters: map[string]bool{}}

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
	published map[string]string // desired subject -> content hash last published
	dirty     map[string]string // names to recompute -> event id that caused it
	// clusters maps every cluster seen on the sources stream to whether
	// its collector has said it synced.
	clusters map[string]bool
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
	if err != nil || hash == r.published[subject] {
		return err
	}
	if _, _, err := events.Publish(ctx, r.js, subject, mark, ""); err != nil {
		publishErrors.Inc()
		return err
	}
	r.published[subject] = hash
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
	for subj := range r.published {
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
		d := merge(name, r.state.contributions(name), r.rank)
		subject := events.DesiredSubject(name)
		hash, err := events.HashOf(d)
		if err != nil {
			return err
		}
		prev, known := r.published[subject]
		if prev == hash || !known && len(d.Endpoints) == 0 && len(d.Losers) == 0 {
			skipped.Inc()
			delete(r.dirty, name)
			continue
		}
		if _, _, err := events.Publish(ctx, r.js, subject, d, r.dirty[name]); err != nil {
			publishErrors.Inc()
			return err
		}
		r.published[subject] = hash
		delete(r.dirty, name)
		published.Inc()
		if len(d.Losers) > 0 {
			r.log.Info("name wanted by several sources", "name", name, "winners", len(d.Contributors), "losers", len(d.Losers))
		}
	}
	namesGauge.Set(float64(len(r.state.byName)))
	return r.publishComplete(ctx)
}
