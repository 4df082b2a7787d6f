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
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/time/rate"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/applier/crdregistry"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/coredns"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
	"github.com/zonestream/zonestream/stage"
)

// constructor builds one provider from its flags.
type constructor func(Config, provider.Options) (provider.Provider, error)

// constructors build each provider, by --provider name.
var constructors = map[string]constructor{
	inmemory.Name: func(c Config, o provider.Options) (provider.Provider, error) {
		return built(inmemory.New(c.InMemory, o))
	},
	rfc2136.Name: func(c Config, o provider.Options) (provider.Provider, error) {
		return built(rfc2136.New(c.RFC2136, o))
	},
	pdns.Name: func(c Config, o provider.Options) (provider.Provider, error) {
		return built(pdns.New(c.PDNS, o))
	},
	coredns.Name: func(c Config, o provider.Options) (provider.Provider, error) {
		return built(coredns.New(c.CoreDNS, o))
	},
	webhook.Name: func(c Config, o provider.Options) (provider.Provider, error) {
		return built(webhook.New(c.Webhook, o))
	},
}

// built returns p as a provider.Provider, or nil with err: a failed
// constructor must not leave a typed nil behind.
func built[P provider.Provider](p P, err error) (provider.Provider, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

// NativeProvider says whether name is one of zonestream's own providers.
func NativeProvider(name string) bool {
	_, ok := constructors[name]
	return ok
}

// providerNames lists --provider's values, for help and errors.
var providerNames = strings.Join(slices.Sorted(maps.Keys(constructors)), ", ")

// Name is the applier stage's name: its command, its identity for dead
// letters and its log attribute.
const Name = "applier"

// maxFailures is how many consecutive provider failures make the applier
// report itself not ready.
const maxFailures = 5

// Config holds the applier's flags and every provider's.
type Config struct {
	Provider string
	// Name is the DNS server's name on the bus (--provider-name): the
	// provider token of its subjects, its durable consumer and its lease.
	// Empty: Provider. Two servers of one kind on one bus need two names.
	Name       string
	Interval   time.Duration
	DefaultTTL int64

	// ZonesCacheDuration is how long the provider's zone list is kept
	// (0: listed every time).
	ZonesCacheDuration time.Duration
	// RateLimit is the most provider calls per second (0: no limit), with
	// bursts of up to RateBurst calls.
	RateLimit float64
	RateBurst int
	// ProviderTimeout bounds every provider call (--provider-timeout):
	// one still running then is abandoned (provider.Deadline).
	ProviderTimeout time.Duration

	InMemory inmemory.Config
	RFC2136  rfc2136.Config
	PDNS     pdns.Config
	Webhook  webhook.Config
	CoreDNS  coredns.Config

	// DryRun (--dry-run, shared): take no plan; list and publish what
	// the provider holds as always.
	DryRun bool
	// Once (--once, shared): a provider the first listing cannot read
	// ends the pass (stage.ErrFinished), as ExternalDNS' --once exits.
	Once bool

	// CRD is the CRD registry (--registry=crd): ownership kept in
	// ExternalDNS' DNSRecord objects, around the provider (crdregistry).
	CRD crdregistry.Config

	// AckWait is how long NATS waits for a plan's ack before redelivering
	// it after a crash (default 15s; the applier signals progress while it
	// works, so a long apply is not redelivered).
	AckWait time.Duration

	// Scope is set for a provider a DNSProvider object declares: published
	// with its zone list (at start, before any listing, and with the
	// listing's problem when one fails). Nil: declared by flags, as before.
	Scope *events.ProviderScope
	// Owner are the shared ownership flags (--txt-owner-id, --txt-prefix,
	// ...): with a Scope, the names a listing finds our ownership record
	// for are counted (Report.Held), for the object's status and quota.
	Owner registry.Settings
}

// RegisterFlags registers --provider, --interval, --default-ttl and the
// flags of every provider.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Provider, "provider", "", "the DNS provider to apply plans to: "+providerNames)
	fs.StringVar(&c.Name, "provider-name", "", "this DNS server's name on the bus (its plans, observed state, durable consumer and lease); "+
		"default --provider. Give each its own when several servers of one provider share a bus")
	fs.DurationVar(&c.Interval, "interval", time.Minute, "how often the provider's zones are listed in full (drift repair)")
	fs.Int64Var(&c.DefaultTTL, "default-ttl", provider.DefaultTTL, "TTL of records whose endpoint sets none")
	fs.Func("min-ttl", "ExternalDNS' name of --default-ttl, as a duration (1m12s) or seconds (72)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			d, err = time.ParseDuration(v + "s")
		}
		if err != nil || d < time.Second {
			return fmt.Errorf("not a TTL of at least 1s: %q", v)
		}
		c.DefaultTTL = int64(d / time.Second)
		return nil
	})
	fs.DurationVar(&c.ZonesCacheDuration, "zones-cache-duration", 0, "how long the provider's zone list is cached (0s: listed every time)")
	fs.Float64Var(&c.RateLimit, "provider-rate-limit", 0, "the most calls per second made to the provider (0: no limit)")
	fs.IntVar(&c.RateBurst, "provider-rate-burst", 10, "how many provider calls may go at once above --provider-rate-limit")
	fs.DurationVar(&c.ProviderTimeout, "provider-timeout", DefaultProviderTimeout, "the longest one provider call may take "+
		"(zone list, zone listing, read-back, apply, adjust, with the provider's own retries): a call still running then is abandoned "+
		"and fails as a timeout, and it may send nothing more")
	c.InMemory.RegisterFlags(fs)
	c.RFC2136.RegisterFlags(fs)
	c.PDNS.RegisterFlags(fs)
	c.Webhook.RegisterFlags(fs)
	c.CoreDNS.RegisterFlags(fs)
}

func (c *Config) validate() error {
	if c.Interval <= 0 {
		return fmt.Errorf("--interval must be positive, got %s", c.Interval)
	}
	if c.DefaultTTL <= 0 {
		return fmt.Errorf("--default-ttl must be positive, got %d", c.DefaultTTL)
	}
	if c.ZonesCacheDuration < 0 {
		return fmt.Errorf("--zones-cache-duration must not be negative, got %s", c.ZonesCacheDuration)
	}
	if c.RateLimit < 0 {
		return fmt.Errorf("--provider-rate-limit must not be negative, got %g", c.RateLimit)
	}
	if c.RateLimit > 0 && c.RateBurst < 1 {
		return fmt.Errorf("--provider-rate-burst must be at least 1 with --provider-rate-limit, got %d", c.RateBurst)
	}
	if c.ProviderTimeout < 0 {
		return fmt.Errorf("--provider-timeout must not be negative, got %s", c.ProviderTimeout)
	}
	if c.ProviderTimeout == 0 {
		c.ProviderTimeout = DefaultProviderTimeout
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
	raw  provider.Provider // as built
	prov provider.Provider // raw, rate limited, zone-cached and checked: every call goes here
	log  *slog.Logger

	mu       sync.Mutex
	listed   bool // the first full listing of this Run was published
	failures int  // consecutive provider failures
	reported Report
	// appliedSinceListing: a change was applied since the last complete
	// full listing (external_dns_controller_no_op_runs_total).
	appliedSinceListing atomic.Bool

	// Touched only by Run's goroutine.
	hashes map[string]string // observed subject -> hash last published
	// listings holds, per zone, the fingerprint of the last full listing
	// whose every name is published as listed: the same listing again
	// needs nothing published.
	listings     map[string]uint64
	zoneListHash string
	zones        []string                   // the provider's zones at the last listing
	published    []string                   // the zones of the zone list last published
	owned        map[string]map[string]bool // with a Scope: per zone, the names held for us (report.go)
	listedZones  map[string]bool            // zones listed successfully at least once
	zoneRecords  map[string]int             // RRsets each zone held at its last listing
	zoneTypes    map[string]map[string]int  // the same by record type
	reconnects   uint64                     // NATS reconnects when hashes were read back
	lastAck      *events.LastAck            // the newest observed state acknowledged
	stores       []*store                   // plans' observed states being stored, oldest first (readback.go)
	// lastListing is when the last full listing began, lastListingTook
	// how long it took, listingComplete whether it listed every zone,
	// planInInterval that a plan was handled since the last tick
	// (listingdue.go).
	lastListing     time.Time
	lastListingTook time.Duration
	listingComplete bool
	planInInterval  bool
}

// New validates cfg and builds the provider it names.
func New(cfg Config, logger *slog.Logger) (*Applier, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := NewProvider(cfg, logger)
	if err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = cfg.Provider
	}
	return NewWithProvider(cfg, name, p, logger)
}

// NewProvider builds the provider cfg names (--provider) from its flags,
// without an applier around it (zonestream webhook-server serves one).
func NewProvider(cfg Config, logger *slog.Logger) (provider.Provider, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.DefaultTTL <= 0 {
		return nil, fmt.Errorf("--default-ttl must be positive, got %d", cfg.DefaultTTL)
	}
	// A provider logs its own errors: they may carry its credentials.
	logger = provider.RedactingLogger(logger)
	build, ok := constructors[cfg.Provider]
	switch {
	case cfg.Provider == "":
		return nil, errors.New("--provider is required (" + providerNames + ")")
	case !ok:
		// A chart or Deployment of ExternalDNS names its cloud provider
		// (aws, google, cloudflare, ...): say where zonestream has it.
		return nil, fmt.Errorf("--provider %q: unknown provider, want one of %s; ExternalDNS' other providers "+
			"(aws, google, azure, cloudflare, ...) are in zonestream built with -tags externaldns, "+
			"or served by zonestream-externaldns to --provider=webhook", cfg.Provider, providerNames)
	}
	return build(cfg, provider.Options{DefaultTTL: cfg.DefaultTTL, Logger: logger.With("provider", cfg.Provider)})
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
	var limiter *rate.Limiter
	if cfg.RateLimit > 0 {
		limiter = rate.NewLimiter(rate.Limit(cfg.RateLimit), cfg.RateBurst)
	}
	waited := rateLimitWaitSeconds.WithLabelValues(name)
	// A provider's errors and log lines leave the process: redacted
	// (redact.go in provider).
	logger = provider.RedactingLogger(logger)
	a := &Applier{cfg: cfg, name: name, raw: p, log: logger.With("provider", name),
		listings: map[string]uint64{}, zoneRecords: map[string]int{},
		zoneTypes: map[string]map[string]int{}}
	// The cache is outside the limiter: a cached zone list takes no token;
	// so are the checks: a batch refused by them takes none either. The
	// deadline is inside the limiter: waiting for a token is not the
	// provider hanging. Every error of the provider is redacted before
	// anything else sees it, a timeout's too.
	bounded := provider.Deadline(provider.Redacting(p), cfg.ProviderTimeout, a.timedOut)
	a.prov = provider.CacheZones(provider.RateLimit(bounded, limiter, func(d time.Duration) { waited.Add(d.Seconds()) }),
		cfg.ZonesCacheDuration)
	if cfg.CRD.Enabled {
		// As ExternalDNS' CRD registry, around the provider: the rate
		// limit and the deadline are the provider's alone.
		store, err := cfg.CRD.NewStore(a.log)
		if err != nil {
			return nil, err
		}
		a.prov = crdregistry.Wrap(a.prov, store)
		a.log.Info("ownership is kept in DNSRecord objects (--registry=crd)", "namespace", store.Namespace(), "owner", cfg.CRD.OwnerID)
	}
	a.prov = provider.Checked(a.prov)
	return a, nil
}

// Provider returns the provider the applier drives, as built.
func (a *Applier) Provider() provider.Provider { return a.raw }

var _ stage.Runner = (*Applier)(nil)

// LeaseKey names the lease of which the holder is the one applier of this
// provider at work; appliers of other providers have their own.
func (a *Applier) LeaseKey() string { return events.ApplierLease(a.name) }

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

// isListed says whether the first full listing of this Run was published.
func (a *Applier) isListed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listed
}

func (a *Applier) updateReady() {
	v := 0.0
	if a.listed && a.failures < maxFailures {
		v = 1
	}
	readyGauge.WithLabelValues(a.name).Set(v)
	if a.externalDNSMetrics() {
		consecutiveSoftErrors.Set(float64(a.failures))
	}
}

func (a *Applier) providerFailed(op string, err error) {
	providerErrorsTotal.WithLabelValues(a.name, op).Inc()
	if a.externalDNSMetrics() {
		registryErrors.Inc()
	}
	a.mu.Lock()
	a.reported.LastError = provider.Redact(err.Error())
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
	a.reported = Report{}
	a.updateReady()
	a.mu.Unlock()
	a.owned = map[string]map[string]bool{}
	a.listedZones = map[string]bool{}
	a.zoneRecords = map[string]int{}
	a.zoneTypes = map[string]map[string]int{}
	a.listings = map[string]uint64{}
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
	a.reconnects = events.Reconnects(js)
	a.lastAck = events.NewLastAck(js, events.StreamObserved)
	a.log.Info("applier starting", "published_names", len(a.hashes), "interval", a.cfg.Interval)
	defer a.awaitObserved()

	if a.cfg.Scope != nil {
		// A declared provider claims its domains before it can list
		// anything: its names wait for it rather than go elsewhere. Its
		// applier started again (new settings, a rotated Secret) keeps the
		// zones listed before until it lists them again.
		if err := a.publishZoneList(ctx, js, a.lastPublishedZones(ctx, js)); err != nil {
			a.log.Error("publishing the zone list failed", "err", err)
		}
	}
	stopAdjust, err := a.serveAdjust(js)
	if err != nil {
		return err
	}
	defer stopAdjust()
	a.fullListing(ctx, js)
	if a.cfg.Once && !a.isListed() {
		return fmt.Errorf("%w, not converged: the provider %s could not be listed", stage.ErrFinished, a.name)
	}
	// A dry run (--dry-run) takes no plan: plans stays nil, and the plans
	// stay queued for zonestream plans and the portal.
	var plans chan jetstream.Msg
	var cons jetstream.Consumer
	stop := func() {}
	if a.cfg.DryRun {
		a.log.Info("dry run (--dry-run): no plan is taken, nothing is written to the provider")
	} else {
		a.takeOverPending(ctx, js)
		plans = make(chan jetstream.Msg)
		if cons, stop, err = a.consumePlans(ctx, js, plans); err != nil {
			return err
		}
	}
	defer func() { stop() }()
	reconnects := events.Reconnects(js)

	ticker := time.NewTicker(a.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			busy := a.planInInterval
			a.planInInterval = false
			// A purged observed stream cannot wait: everything is published again.
			if a.listingDue(time.Now(), busy) || a.checkStream(ctx, js) {
				a.fullListing(ctx, js)
			} else {
				listingsDeferred.WithLabelValues(a.name).Inc()
			}
			if n := events.Reconnects(js); n != reconnects && cons != nil && a.consumerAhead(ctx, js, cons) {
				// The server restarted and lost plans it had acknowledged;
				// new plans reuse their sequences, which the consumer
				// would skip. Start it again from what the queue holds.
				stop()
				_ = js.DeleteConsumer(ctx, events.StreamPlans, events.ApplierDurable(a.name))
				if cons, stop, err = a.consumePlans(ctx, js, plans); err != nil {
					return err
				}
				a.log.Warn("the plans stream went back in time (NATS lost messages it had acknowledged); plan consumer started again")
				reconnects = n
			} else if n != reconnects {
				reconnects = n
			}
		case msg := <-plans:
			a.planInInterval = true
			a.handlePlan(ctx, js, msg)
		}
	}
}

// consumePlans creates the applier's durable consumer of its provider's
// plans and feeds them to plans until stop is called or ctx ends.
func (a *Applier) consumePlans(ctx context.Context, js jetstream.JetStream, plans chan<- jetstream.Msg) (jetstream.Consumer, func(), error) {
	cons, err := js.CreateOrUpdateConsumer(ctx, events.StreamPlans, jetstream.ConsumerConfig{
		Durable:       events.ApplierDurable(a.name),
		Description:   "applier of provider " + a.name + ": plans in order, one at a time",
		FilterSubject: events.PlanFilter(a.name),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1,
		AckWait:       a.cfg.AckWait,
		MaxDeliver:    -1,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("applier: plan consumer: %w", err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return nil, nil, fmt.Errorf("applier: plan consumer: %w", err)
	}
	go func() {
		_ = events.Pump(ctx, iter, func(msg jetstream.Msg) {
			select {
			case plans <- msg:
			case <-ctx.Done():
			}
		}, func(err error) { a.log.Warn("plan consumer", "err", err) })
	}()
	return cons, iter.Stop, nil
}

// consumerAhead reports whether the plan consumer has delivered a sequence
// beyond the last the plans stream holds: the stream went back in time.
func (a *Applier) consumerAhead(ctx context.Context, js jetstream.JetStream, cons jetstream.Consumer) bool {
	info, err := cons.Info(ctx)
	if err != nil {
		return false
	}
	st, err := js.Stream(ctx, events.StreamPlans)
	if err != nil {
		return false
	}
	return info.Delivered.Stream > st.CachedInfo().State.LastSeq
}
