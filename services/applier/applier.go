// Package applier is zonestream's last stage: it applies the planner's
// change plans to a DNS provider and publishes what the provider really
// holds (the observed state), name by name, and the zones it manages.
package applier

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
)

// Provider names accepted by --provider.
const (
	ProviderInMemory = "inmemory"
	ProviderRFC2136  = "rfc2136"
)

// Service is the name the applier uses for dead letters and logs.
const Service = "applier"

// maxFailures is how many consecutive provider failures make the applier
// report itself not ready.
const maxFailures = 5

// Config holds the applier's flags and every provider's.
type Config struct {
	Provider   string
	Interval   time.Duration
	DefaultTTL int64

	InMemory inmemory.Config
	RFC2136  rfc2136.Config

	// AckWait is how long NATS waits for a plan's ack before redelivering
	// it after a crash (default 15s; the applier signals progress while it
	// works, so a long apply is not redelivered).
	AckWait time.Duration
}

// RegisterFlags registers --provider, --interval, --default-ttl and the
// flags of every provider.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Provider, "provider", "", "the DNS provider to apply plans to: inmemory or rfc2136")
	fs.DurationVar(&c.Interval, "interval", time.Minute, "how often the provider's zones are listed in full (drift repair)")
	fs.Int64Var(&c.DefaultTTL, "default-ttl", provider.DefaultTTL, "TTL of records whose endpoint sets none")
	c.InMemory.RegisterFlags(fs)
	c.RFC2136.RegisterFlags(fs)
}

func (c *Config) validate() error {
	if c.Interval <= 0 {
		return fmt.Errorf("--interval must be positive, got %s", c.Interval)
	}
	if c.DefaultTTL <= 0 {
		return fmt.Errorf("--default-ttl must be positive, got %d", c.DefaultTTL)
	}
	if c.AckWait <= 0 {
		c.AckWait = 15 * time.Second
	}
	return nil
}

// Applier applies plans to one provider and publishes its observed state.
type Applier struct {
	cfg  Config
	name string
	prov provider.Provider
	log  *slog.Logger

	mu       sync.Mutex
	listed   bool // the first full listing of this Run was published
	failures int  // consecutive provider failures

	// Touched only by Run's goroutine.
	hashes       map[string]string // observed subject -> hash last published
	zoneListHash string
	zones        []string        // the provider's zones at the last listing
	listedZones  map[string]bool // zones listed successfully at least once
}

// New validates cfg and builds the provider it names.
func New(cfg Config, logger *slog.Logger) (*Applier, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts := provider.Options{DefaultTTL: cfg.DefaultTTL, Logger: logger.With("provider", cfg.Provider)}
	var (
		p   provider.Provider
		err error
	)
	switch cfg.Provider {
	case ProviderInMemory:
		p, err = inmemory.New(cfg.InMemory, opts)
	case ProviderRFC2136:
		p, err = rfc2136.New(cfg.RFC2136, opts)
	case "":
		return nil, errors.New("--provider is required (inmemory or rfc2136)")
	default:
		return nil, fmt.Errorf("--provider %q: unknown provider, want inmemory or rfc2136", cfg.Provider)
	}
	if err != nil {
		return nil, err
	}
	return NewWithProvider(cfg, cfg.Provider, p, logger)
}

// NewWithProvider builds an applier around an already built provider,
// published under name (the subjects' provider token).
func NewWithProvider(cfg Config, name string, p provider.Provider, logger *slog.Logger) (*Applier, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if name == "" || p == nil {
		return nil, errors.New("applier: a provider and its name are required")
	}
	cfg.Provider = name
	return &Applier{cfg: cfg, name: name, prov: p, log: logger.With("provider", name)}, nil
}

// Provider returns the provider the applier drives.
func (a *Applier) Provider() provider.Provider { return a.prov }

var _ service.Service = (*Applier)(nil)

// Ready returns nil once the first full listing was published and the
// provider has failed fewer than 5 times in a row.
func (a *Applier) Ready() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.listed {
		return errors.New("applier: first full listing of the provider not published yet")
	}
	if a.failures >= maxFailures {
		return fmt.Errorf("applier: provider %s failed %d times in a row", a.name, a.failures)
	}
	return nil
}

func (a *Applier) updateReady() {
	v := 0.0
	if a.listed && a.failures < maxFailures {
		v = 1
	}
	readyGauge.WithLabelValues(a.name).Set(v)
}

func (a *Applier) providerFailed(op string, err error) {
	providerErrorsTotal.WithLabelValues(a.name, op).Inc()
	a.mu.Lock()
	a.failures++
	a.updateReady()
	a.mu.Unlock()
}

func (a *Applier) providerOK() {
	a.mu.Lock()
	a.failures = 0
	a.updateReady()
	a.mu.Unlock()
}

// Run reads back what it last published, lists the provider in full,
// then applies plans as they come and lists again every --interval, until
// ctx ends. Provider errors are logged and counted, never fatal.
func (a *Applier) Run(ctx context.Context, js jetstream.JetStream) error {
	a.mu.Lock()
	a.listed, a.failures = false, 0
	a.updateReady()
	a.mu.Unlock()
	a.listedZones = map[string]bool{}
	a.zones = nil

	var err error
	if a.hashes, err = events.LastHashes(ctx, js, events.StreamObserved, events.ObservedFilter(a.name)); err != nil {
		return fmt.Errorf("applier: read back observed state: %w", err)
	}
	zh, err := events.LastHashes(ctx, js, events.StreamObserved, events.ZonesSubject(a.name))
	if err != nil {
		return fmt.Errorf("applier: read back zone list: %w", err)
	}
	a.zoneListHash = zh[events.ZonesSubject(a.name)]
	a.log.Info("applier starting", "published_names", len(a.hashes), "interval", a.cfg.Interval)

	a.fullListing(ctx, js)

	cons, err := js.CreateOrUpdateConsumer(ctx, events.StreamPlans, jetstream.ConsumerConfig{
		Durable:       "applier-" + events.EscapeToken(a.name),
		Description:   "applier of provider " + a.name + ": plans in order, one at a time",
		FilterSubject: events.PlanFilter(a.name),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1,
		AckWait:       a.cfg.AckWait,
		MaxDeliver:    -1,
	})
	if err != nil {
		return fmt.Errorf("applier: plan consumer: %w", err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return fmt.Errorf("applier: plan consumer: %w", err)
	}
	defer iter.Stop()
	plans := make(chan jetstream.Msg)
	go func() {
		for {
			msg, err := iter.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) || ctx.Err() != nil {
					return
				}
				a.log.Warn("plan consumer", "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			select {
			case plans <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()

	ticker := time.NewTicker(a.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			a.fullListing(ctx, js)
		case msg := <-plans:
			a.handlePlan(ctx, js, msg)
		}
	}
}

// fullListing lists every zone and publishes what changed, then the zone
// list: every zone listed successfully at least once, so a planner never
// sees a zone before its records.
func (a *Applier) fullListing(ctx context.Context, js jetstream.JetStream) {
	zones, err := a.prov.Zones(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.providerFailed("zones", err)
			a.log.Error("listing the provider's zones failed", "err", err)
		}
		return
	}
	for i := range zones {
		zones[i] = events.NormalizeName(zones[i])
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)
	a.zones = zones
	complete := true
	for _, z := range zones {
		if err := a.syncZone(ctx, js, z, ""); err != nil {
			complete = false
			continue
		}
		a.listedZones[z] = true
	}
	var listed []string
	for _, z := range zones {
		if a.listedZones[z] {
			listed = append(listed, z)
		}
	}
	if len(listed) > 0 || len(zones) == 0 {
		if err := a.publishZoneList(ctx, js, listed); err != nil {
			complete = false
			a.log.Error("publishing the zone list failed", "err", err)
		}
	}
	if complete && ctx.Err() == nil {
		a.mu.Lock()
		first := !a.listed
		a.listed = true
		a.updateReady()
		a.mu.Unlock()
		if first {
			a.log.Info("first full listing published", "zones", zones)
		}
	}
}

func (a *Applier) publishZoneList(ctx context.Context, js jetstream.JetStream, zones []string) error {
	zl := &events.ZoneList{Provider: a.name, Zones: slices.Clone(zones)}
	h, err := events.HashOf(zl)
	if err != nil {
		return err
	}
	if h == a.zoneListHash {
		return nil
	}
	hash, _, err := events.Publish(ctx, js, events.ZonesSubject(a.name), zl, "")
	if err != nil {
		return err
	}
	a.zoneListHash = hash
	a.log.Info("published zone list", "zones", zones)
	return nil
}

// zoneOf returns the most specific of zones that name is in.
func zoneOf(name string, zones []string) string {
	best := ""
	for _, z := range zones {
		if provider.InZone(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// syncZone lists zone and publishes the observed state of every name
// whose content changed, tombstones for names that are gone included. A
// failed listing publishes nothing: no deletes from ignorance.
func (a *Applier) syncZone(ctx context.Context, js jetstream.JetStream, zone, causation string) error {
	eps, err := a.prov.Records(ctx, zone)
	if err != nil {
		if ctx.Err() == nil {
			a.providerFailed("records", err)
			a.log.Error("listing a zone failed; publishing nothing for it", "zone", zone, "err", err)
		}
		return err
	}
	a.providerOK()
	zones := a.zones
	if !slices.Contains(zones, zone) {
		zones = append(slices.Clone(zones), zone)
	}
	byName := map[string][]events.Endpoint{}
	for _, ep := range eps {
		name := events.NormalizeName(ep.DNSName)
		if zoneOf(name, zones) != zone {
			continue // belongs to a more specific zone, listed on its own
		}
		byName[name] = append(byName[name], ep)
	}
	published := 0
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name, Records: byName[name]}
		ok, err := a.publishObserved(ctx, js, st, causation)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			published++
		}
	}
	prefix := strings.TrimSuffix(events.ObservedFilter(a.name), ">")
	tombstones := 0
	for _, subj := range slices.Sorted(maps.Keys(a.hashes)) {
		tokens, ok := strings.CutPrefix(subj, prefix)
		if !ok {
			continue
		}
		name, err := events.NameFromTokens(tokens)
		if err != nil || zoneOf(name, zones) != zone {
			continue
		}
		if _, ok := byName[name]; ok {
			continue
		}
		st := &events.ObservedState{Provider: a.name, Zone: zone, DNSName: name}
		ok, err = a.publishObserved(ctx, js, st, causation)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			tombstones++
		}
	}
	if published > 0 || tombstones > 0 {
		a.log.Debug("published observed state", "zone", zone, "names", published, "tombstones", tombstones)
	}
	return errors.Join(errs...)
}

func (a *Applier) publishObserved(ctx context.Context, js jetstream.JetStream, st *events.ObservedState, causation string) (bool, error) {
	subj := events.ObservedSubject(a.name, st.DNSName)
	h, err := events.HashOf(st)
	if err != nil {
		return false, err
	}
	if a.hashes[subj] == h {
		return false, nil
	}
	hash, _, err := events.Publish(ctx, js, subj, st, causation)
	if err != nil {
		a.log.Error("publishing observed state failed", "subject", subj, "err", err)
		return false, err
	}
	a.hashes[subj] = hash
	return true, nil
}

// outcome is what became of a plan's changes.
type outcome struct {
	status  events.ResultStatus
	err     error
	applied []events.Change
	stale   []events.Change
	failed  []events.FailedChange
	abort   error // a transient error: stop trying the rest
}

// handlePlan applies one plan, publishes the zone's observed state after
// it and the result, then acks. Undecodable plans are dead-lettered.
func (a *Applier) handlePlan(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg) {
	r := events.Received{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()}
	if meta, err := msg.Metadata(); err == nil {
		r.Seq, r.Pending = meta.Sequence.Stream, meta.NumPending
	}
	var plan events.Plan
	if err := events.Unmarshal(r.Header, r.Data, &plan); err != nil {
		a.log.Error("undecodable plan, parking it on the dead-letter subject", "subject", r.Subject, "seq", r.Seq, "err", err)
		if derr := events.DeadLetter(ctx, js, Service, r, err); derr != nil {
			a.log.Error("dead-lettering failed; will retry", "err", derr)
			_ = msg.NakWithDelay(2 * time.Second)
			return
		}
		deadLettersTotal.Inc()
		a.ack(ctx, msg)
		return
	}
	causation := r.EventID()
	if plan.Zone == "" {
		if tokens, ok := strings.CutPrefix(r.Subject, strings.TrimSuffix(events.PlanFilter(a.name), ">")); ok {
			plan.Zone, _ = events.NameFromTokens(tokens)
		}
	}
	zone := events.NormalizeName(plan.Zone)
	log := a.log.With("plan", plan.ID, "zone", zone, "changes", len(plan.Changes))

	// Keep the plan from being redelivered while the provider works.
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(max(a.cfg.AckWait/3, time.Second))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	defer close(stop)

	managed := slices.Contains(a.zones, zone)
	if !managed {
		if zs, err := a.prov.Zones(ctx); err == nil {
			for _, z := range zs {
				if events.NormalizeName(z) == zone {
					managed = true
				}
			}
		}
	}
	start := time.Now()
	var out outcome
	switch {
	case plan.Provider != "" && plan.Provider != a.name:
		out = outcome{status: events.ResultFailed, err: fmt.Errorf("plan is for provider %q, this applier drives %q", plan.Provider, a.name)}
	case zone == "":
		out = outcome{status: events.ResultFailed, err: errors.New("plan names no zone")}
	case !managed:
		out = outcome{status: events.ResultFailed, err: fmt.Errorf("zone %q is not managed by provider %s", zone, a.name)}
	default:
		out = a.apply(ctx, zone, plan.Changes)
	}
	applySeconds.WithLabelValues(a.name).Observe(time.Since(start).Seconds())
	if ctx.Err() != nil {
		return // not acked: redelivered to the next applier; re-applying is idempotent
	}

	if managed {
		_ = a.syncZone(ctx, js, zone, causation)
	}
	res := &events.Result{PlanID: plan.ID, Provider: a.name, Zone: zone, Status: out.status,
		Failed: out.failed, Applied: len(out.applied)}
	if out.err != nil {
		res.Error = out.err.Error()
	}
	stream, err := js.Stream(ctx, events.StreamObserved)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = stream.Info(ctx); err == nil {
			res.ObservedSeq = info.State.LastSeq
		}
	}
	if err == nil {
		_, _, err = events.Publish(ctx, js, events.ResultSubject(a.name, zone), res, causation)
	}
	if err != nil {
		log.Error("publishing the plan's result failed; the plan will be redelivered", "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	a.ack(ctx, msg)

	plansTotal.WithLabelValues(a.name, string(out.status)).Inc()
	for _, c := range out.applied {
		changesTotal.WithLabelValues(a.name, c.Action(), "applied").Inc()
	}
	for _, c := range out.stale {
		changesTotal.WithLabelValues(a.name, c.Action(), "stale").Inc()
	}
	for _, f := range out.failed {
		changesTotal.WithLabelValues(a.name, f.Change.Action(), "failed").Inc()
	}
	attrs := []any{"status", out.status, "applied", len(out.applied), "failed", len(out.failed),
		"observed_seq", res.ObservedSeq, "took", time.Since(start).Round(time.Millisecond)}
	switch out.status {
	case events.ResultApplied:
		log.Info("plan applied", attrs...)
	case events.ResultStale:
		log.Info("plan is stale, nothing applied; the planner will re-plan", append(attrs, "reason", res.Error)...)
	default:
		for _, f := range out.failed {
			log.Warn("change rejected", "change", f.Change.String(), "err", f.Error)
		}
		log.Warn("plan not fully applied", append(attrs, "err", res.Error)...)
	}
}

func (a *Applier) ack(ctx context.Context, msg jetstream.Msg) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		a.log.Warn("acking a plan failed", "err", err)
	}
}

// apply applies changes; a batch the provider rejects as a whole is split
// in halves until the bad changes are isolated, so one bad record does not
// block the others.
func (a *Applier) apply(ctx context.Context, zone string, changes []events.Change) outcome {
	var out outcome
	if len(changes) == 0 {
		out.status = events.ResultApplied
		return out
	}
	err := a.prov.Apply(ctx, zone, changes)
	n := min(provider.AppliedCount(err), len(changes))
	out.applied = append(out.applied, changes[:n]...)
	rest := changes[n:]
	switch {
	case err == nil:
		a.providerOK()
		out.applied = changes
		out.status = events.ResultApplied
		return out
	case errors.Is(err, provider.ErrStale):
		a.providerOK()
		out.err = err
		if n == 0 {
			out.status = events.ResultStale
			out.stale = changes
			return out
		}
		for _, c := range rest {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
			out.stale = append(out.stale, c)
		}
	case errors.Is(err, provider.ErrPermanent):
		a.providerOK()
		a.isolate(ctx, zone, rest, err, &out)
		if out.abort != nil {
			out.err = out.abort
		} else if len(out.failed) == 1 {
			out.err = errors.New(out.failed[0].Error)
		} else {
			out.err = fmt.Errorf("%d change(s) rejected", len(out.failed))
		}
	default:
		if ctx.Err() == nil {
			a.providerFailed("apply", err)
		}
		out.err = err
		for _, c := range rest {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
		}
	}
	if len(out.applied) == 0 {
		out.status = events.ResultFailed
	} else {
		out.status = events.ResultPartial
	}
	return out
}

// isolate applies changes, known to hold a change the provider rejects
// permanently with err, in halves, recursively.
func (a *Applier) isolate(ctx context.Context, zone string, changes []events.Change, err error, out *outcome) {
	fail := func(cs []events.Change, err error) {
		for _, c := range cs {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
		}
	}
	if len(changes) == 0 {
		return
	}
	if out.abort != nil || ctx.Err() != nil {
		fail(changes, cmpErr(out.abort, ctx.Err()))
		return
	}
	if len(changes) == 1 {
		fail(changes, err)
		return
	}
	mid := len(changes) / 2
	for _, half := range [][]events.Change{changes[:mid], changes[mid:]} {
		if out.abort != nil || ctx.Err() != nil {
			fail(half, cmpErr(out.abort, ctx.Err()))
			continue
		}
		e := a.prov.Apply(ctx, zone, half)
		if e == nil {
			out.applied = append(out.applied, half...)
			continue
		}
		n := min(provider.AppliedCount(e), len(half))
		out.applied = append(out.applied, half[:n]...)
		rest := half[n:]
		switch {
		case errors.Is(e, provider.ErrStale):
			out.stale = append(out.stale, rest...)
			fail(rest, e)
		case errors.Is(e, provider.ErrPermanent):
			a.isolate(ctx, zone, rest, e, out)
		default:
			if ctx.Err() == nil {
				a.providerFailed("apply", e)
			}
			out.abort = e
			fail(rest, e)
		}
	}
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return errors.New("aborted")
}
