// Package planner turns what is wanted (the desired stream) and what the
// providers hold (the observed stream) into change plans per zone. It owns
// the rules that keep users' DNS safe: domain filters, the TXT ownership
// registry, the policy, and no delete before it has read everything.
package planner

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
	"github.com/nats-io/nuid"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/stage"
)

// Name is the planner stage's name: its command, its identity for dead
// letters and its log attribute.
const Name = "planner"

// The values of --registry, ExternalDNS' names.
const (
	RegistryTXT  = "txt"  // ownership TXT records, ExternalDNS' format (registry.go)
	RegistryNoop = "noop" // no ownership records: every record of a managed type in scope is ours
	// RegistryCRD: ownership in ExternalDNS' DNSRecord objects, which the
	// applier keeps; the planner plans ownership records as for txt, named
	// as registry.CRDNames places them, and the applier never writes them
	// to DNS.
	RegistryCRD = registry.RegistryCRD
)

// Config is the planner's configuration; flag names are ExternalDNS'.
type Config struct {
	Domains             domains.Settings
	Ownership           registry.Settings
	TXTEncryptEnabled   bool
	TXTEncryptAESKey    string
	MigrateFromTXTOwner string
	TXTAdoptOwners      stage.StringList
	Policy              string
	Registry            string
	ManagedRecordTypes  stage.StringList
	ExcludeRecordTypes  stage.StringList
	BatchChangeSize     int
	BatchWindow         time.Duration
	PlanTimeout         time.Duration
	// MaxDeletes and MaxDeletesPercent are the mass-delete guard's limits
	// (guard.go); 0 turns either off.
	MaxDeletes        int
	MaxDeletesPercent int
	// MaxDeletesWindow is how far back the guard counts a zone's deletes
	// (recent.go); 0: each pass on its own.
	MaxDeletesWindow time.Duration
	// DryRun (--dry-run, shared): plans are published marked as such and
	// never awaited (dryrun.go).
	DryRun bool
	// Once (--once, shared): Run ends after one pass (once.go), or with
	// what it still waits for once OnceTimeout (--once-timeout) passed.
	Once        bool
	OnceTimeout time.Duration
}

// RegisterFlags adds the planner's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.TXTEncryptEnabled, "txt-encrypt-enabled", false, "write the ownership TXT strings encrypted (AES-256-GCM, as ExternalDNS)")
	stage.SecretVar(fs, &c.TXTEncryptAESKey, "txt-encrypt-aes-key", "AES key for the ownership TXT strings: 32 bytes, or their standard base64; when set, encrypted strings are read even without --txt-encrypt-enabled")
	fs.StringVar(&c.MigrateFromTXTOwner, "migrate-from-txt-owner", "", "an old --txt-owner-id: its records are taken as ours and their ownership TXT rewritten to --txt-owner-id")
	fs.Var(&c.TXTAdoptOwners, "txt-adopt-owner", "an owner whose records may be taken over: its ownership TXT is rewritten to --txt-owner-id (repeatable)")
	fs.StringVar(&c.Policy, "policy", string(PolicySync), "sync, upsert-only or create-only")
	fs.Var(&c.ExcludeRecordTypes, "exclude-record-types", "record types never to touch, even if managed (repeatable)")
	fs.IntVar(&c.BatchChangeSize, "batch-change-size", 1000, "most changes in one plan")
	fs.DurationVar(&c.BatchWindow, "batch-window", 20*time.Millisecond, "the longest changes gather into one pass while more keep arriving; with none waiting, a free zone is planned at once")
	fs.DurationVar(&c.PlanTimeout, "plan-timeout", 30*time.Second, "re-plan a zone whose plan got no result in this time (longer than the applier's ack wait)")
	fs.IntVar(&c.MaxDeletes, "max-deletes", DefaultMaxDeletes, "hold a zone's deletes when more owned record sets would go within --max-deletes-window than this, and more than --max-deletes-percent of the zone's, until approved (zonestream plans approve); 0: no absolute limit")
	fs.IntVar(&c.MaxDeletesPercent, "max-deletes-percent", DefaultMaxDeletesPercent, "hold a zone's deletes when more than this share of its owned record sets would go within --max-deletes-window, and more than --max-deletes; 0: no share limit (both 0: no guard)")
	fs.DurationVar(&c.MaxDeletesWindow, "max-deletes-window", DefaultMaxDeletesWindow, "the mass-delete guard counts a zone's deletes over this long, so that a wipe arriving in pieces (helm uninstall, an Argo CD prune) is judged as one; 0: each planning pass on its own")
}

// Planner is the planner service.
type Planner struct {
	cfg      Config
	policy   Policy
	limits   limits
	managed  []string
	reg      *txtRegistry
	filter   domains.Filter
	log      *slog.Logger
	caughtUp atomic.Bool
}

// New validates the configuration.
func New(cfg Config, logger *slog.Logger) (*Planner, error) {
	registerOwnerMismatches()
	p := &Planner{cfg: cfg, policy: Policy(cfg.Policy), log: logger}
	var err error
	if p.filter, err = domains.New(cfg.Domains); err != nil {
		return nil, err
	}
	if !p.policy.valid() {
		return nil, fmt.Errorf("--policy=%q: want sync, upsert-only or create-only", cfg.Policy)
	}
	if cfg.Registry != RegistryTXT && cfg.Registry != RegistryNoop && cfg.Registry != RegistryCRD {
		return nil, fmt.Errorf("--registry=%q: want txt, noop or crd", cfg.Registry)
	}
	for flag, id := range map[string]string{"txt-owner-id": cfg.Ownership.OwnerID, "migrate-from-txt-owner": cfg.MigrateFromTXTOwner} {
		if (id == "" && flag == "txt-owner-id") || strings.ContainsAny(id, ",= \"") {
			return nil, fmt.Errorf("--%s=%q: must be non-empty, without commas, '=', quotes or spaces", flag, id)
		}
	}
	for _, id := range cfg.TXTAdoptOwners {
		if id == "" || strings.ContainsAny(id, ",= \"") {
			return nil, fmt.Errorf("--txt-adopt-owner=%q: must be non-empty, without commas, '=', quotes or spaces", id)
		}
	}
	if cfg.Ownership.Prefix != "" && cfg.Ownership.Suffix != "" {
		return nil, errors.New("--txt-prefix and --txt-suffix are mutually exclusive")
	}
	key, err := registry.ParseAESKey(cfg.TXTEncryptAESKey)
	if err != nil {
		return nil, fmt.Errorf("--txt-encrypt-aes-key: %w", err)
	}
	if cfg.TXTEncryptEnabled && key == nil {
		return nil, errors.New("--txt-encrypt-enabled needs --txt-encrypt-aes-key")
	}
	if cfg.MaxDeletes < 0 {
		return nil, fmt.Errorf("--max-deletes=%d: want 0 (no limit) or more", cfg.MaxDeletes)
	}
	if cfg.MaxDeletesWindow < 0 {
		return nil, fmt.Errorf("--max-deletes-window=%s: want 0 (each pass on its own) or more", cfg.MaxDeletesWindow)
	}
	if cfg.MaxDeletesPercent < 0 || cfg.MaxDeletesPercent > 100 {
		return nil, fmt.Errorf("--max-deletes-percent=%d: want 0 (no limit) to 100", cfg.MaxDeletesPercent)
	}
	p.limits = limits{max: cfg.MaxDeletes, percent: cfg.MaxDeletesPercent}
	if cfg.BatchChangeSize < 2 {
		return nil, fmt.Errorf("--batch-change-size=%d: a record and its ownership need at least 2", cfg.BatchChangeSize)
	}
	p.managed = []string{events.RecordTypeA, events.RecordTypeAAAA, events.RecordTypeCNAME}
	if len(cfg.ManagedRecordTypes) > 0 {
		p.managed = nil
		for _, t := range cfg.ManagedRecordTypes {
			p.managed = append(p.managed, strings.ToUpper(t))
		}
	}
	slices.Sort(p.managed)
	p.managed = slices.Compact(p.managed)
	excluded := map[string]bool{}
	for _, t := range cfg.ExcludeRecordTypes {
		excluded[strings.ToUpper(t)] = true
	}
	p.managed = slices.DeleteFunc(p.managed, func(t string) bool { return excluded[t] })
	adopt := slices.Clone([]string(cfg.TXTAdoptOwners))
	slices.Sort(adopt)
	cfg.Ownership.Registry = cfg.Registry
	names, encrypt := cfg.Ownership.Names(), cfg.TXTEncryptEnabled
	if cfg.Registry == RegistryCRD {
		// Ownership records never reach DNS: the applier keeps them in
		// DNSRecords, placed where it looks for them (Names), in plain text.
		encrypt = false
		if logger != nil && (cfg.Ownership.Prefix != "" || cfg.Ownership.Suffix != "" || cfg.Ownership.WildcardReplacement != "" || cfg.TXTEncryptEnabled) {
			logger.Info("--registry=crd: --txt-prefix, --txt-suffix, --txt-wildcard-replacement and --txt-encrypt-enabled are not used (no ownership TXT is written)")
		}
	}
	p.reg = &txtRegistry{noop: cfg.Registry == RegistryNoop, Settings: cfg.Ownership, migrate: cfg.MigrateFromTXTOwner,
		adopt: slices.Compact(adopt), names: names,
		aesKey: key, encrypt: encrypt, managed: p.managed}
	return p, nil
}

// LeaseKey names the lease of which the holder is the one planner at
// work: two would publish duplicate plans and purge each other's.
func (p *Planner) LeaseKey() string { return events.PlannerLease() }

// Ready reports whether the planner has read the desired and observed streams.
func (p *Planner) Ready() error {
	if !p.caughtUp.Load() {
		return errors.New("replaying the desired and observed streams")
	}
	return nil
}

// Run plans until ctx ends.
func (p *Planner) Run(ctx context.Context, js jetstream.JetStream) error {
	p.caughtUp.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := p.dropEarlierPlans(ctx, js); err != nil {
		return err
	}
	in := make(chan events.Received, 1024)
	replays, err := p.watch(ctx, js, in)
	if err != nil {
		return err
	}
	desiredDone, observedDone, heldDone := replays[0], replays[1], replays[2]

	s := newRun(p)
	s.js = js
	defer s.forgetVerified() // the next Run counts again from the streams
	defer s.forgetRoutes()

	win := newWindow(p.cfg.BatchWindow) // window.go
	defer win.stop()
	wake := newAlarm() // wake.go
	defer wake.timer.Stop()
	pending := 3 // replays not yet done
	var passTimeout <-chan time.Time
	if p.cfg.Once && p.cfg.OnceTimeout > 0 {
		t := time.NewTimer(p.cfg.OnceTimeout)
		defer t.Stop()
		passTimeout = t.C
	}
	pass := func() {
		start := time.Now()
		win.stop()
		s.plan(ctx)
		win.passed(start, time.Now())
	}
	for {
		reportLag(len(in), len(s.dirty))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-in:
			s.fold(ctx, m)
		case <-desiredDone:
			desiredDone, pending = nil, pending-1
		case <-observedDone:
			observedDone, pending = nil, pending-1
		case <-heldDone:
			heldDone, pending = nil, pending-1
		case <-wake.timer.C:
			wake.rang()
			s.expireFlights(ctx)
			s.rescan = true // back-offs and timeouts end with time
		case <-win.timer.C:
			pass()
		case <-passTimeout:
			return s.passTimedOut(p.cfg.OnceTimeout)
		}
		if pending == 0 && !p.caughtUp.Load() {
			// Every replayed message is in the buffer before the replay is
			// reported done; take them all before the first plan.
			for len(in) > 0 {
				m := <-in
				s.fold(ctx, m)
			}
			s.markAll()
			p.caughtUp.Store(true)
			caughtUpGauge.Set(1)
			p.log.Info("replayed desired and observed state", "desired", len(s.desired), "providers", len(s.zones))
		}
		if p.caughtUp.Load() && (win.armed() || s.plannable()) && win.passNow(len(in) > 0, time.Now()) {
			pass()
		}
		if p.cfg.Once && p.caughtUp.Load() && !win.armed() {
			if done, err := s.passDone(); done {
				return err
			}
		}
		wake.set(s.wakeAt())
	}
}

// dropEarlierPlans purges the plans queued by an earlier run: they were
// computed by a run that is gone, nobody waits for their results, and this
// run plans afresh. On a clustered NATS the request may time out while the
// stream's leader is elected (just created, or a node lost): that is
// retried; any other refusal ends the run.
func (p *Planner) dropEarlierPlans(ctx context.Context, js jetstream.JetStream) error {
	n, err := purgeEarlierPlans(ctx, js)
	for attempt := 1; isTransient(err) && ctx.Err() == nil; attempt++ {
		p.log.Warn("purging plans of earlier runs failed; retrying", "err", err, "attempt", attempt)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		n, err = purgeEarlierPlans(ctx, js)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	if n > 0 {
		p.log.Info("dropped plans queued by an earlier run", "plans", n)
	}
	return nil
}

// watch feeds in with the desired, observed, held and results streams;
// the channels it returns close once the replays of the first three are
// done.
func (p *Planner) watch(ctx context.Context, js jetstream.JetStream, in chan<- events.Received) ([3]<-chan struct{}, error) {
	var replays [3]<-chan struct{}
	watch := func(stream string, filters ...string) (<-chan struct{}, error) {
		return events.Watch(ctx, js, stream, filters, func(m events.Received) {
			select {
			case in <- m:
			case <-ctx.Done():
			}
		})
	}
	var err error
	if replays[0], err = watch(events.StreamDesired, events.SubjectDesired+".>"); err != nil {
		return replays, err
	}
	// Only a completeness mark published since the watch began counts:
	// ask dedup for one now rather than wait up to its heartbeat, for
	// deletes and for the names read back from the stream.
	if err := events.RequestRenewal(js, events.RenewCompleteSubject()); err != nil {
		p.log.Warn("asking dedup to renew its completeness mark failed; waiting for its heartbeat", "err", err)
	}
	if replays[1], err = watch(events.StreamObserved, events.SubjectObserved+".>", events.SubjectZones+".>"); err != nil {
		return replays, err
	}
	if replays[2], err = watch(events.StreamHeld, events.SubjectHeld+".>", events.SubjectApprovals+".>"); err != nil {
		return replays, err
	}
	_, err = watch(events.StreamResults, events.SubjectResults+".>")
	return replays, err
}

// planID makes plan ids; a var so tests can make them predictable.
var planID = nuid.Next
