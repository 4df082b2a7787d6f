package portal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/probe"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/web"
)

// Name is the portal stage's name: its command, its identity on the bus
// and its log attribute.
const Name = "portal"

// Portal keeps the projection current and serves it.
type Portal struct {
	cfg  Config
	log  *slog.Logger
	proj *projection.Projection

	ready atomic.Bool
	addr  atomic.Value // string: where the page listens
}

// New returns a portal; Run starts it.
func New(cfg Config, logger *slog.Logger) (*Portal, error) {
	if cfg.Resolver != "" {
		if _, _, err := net.SplitHostPort(cfg.Resolver); err != nil {
			return nil, fmt.Errorf("--portal-resolver %q: want host:port: %w", cfg.Resolver, err)
		}
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Minute
	}
	filter, err := domains.New(cfg.Domains)
	if err != nil {
		return nil, err
	}
	proj := projection.New(projection.Options{Grace: cfg.Grace, Ownership: cfg.Ownership, Checking: cfg.Resolver != "",
		Filtered: filter.Reason})
	return &Portal{cfg: cfg, log: logger, proj: proj}, nil
}

// Projection is the portal's read model.
func (p *Portal) Projection() *projection.Projection { return p.proj }

// Addr is where the page listens, once it does.
func (p *Portal) Addr() string {
	a, _ := p.addr.Load().(string)
	return a
}

// Ready: caught up with the streams. A page that cannot listen does not
// make the pipeline unready (its log says so).
func (p *Portal) Ready() error {
	if !p.ready.Load() {
		return errors.New("portal: catching up with the streams")
	}
	return nil
}

// Run follows the streams and serves until ctx ends.
func (p *Portal) Run(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Plans leave their work-queue stream once applied: the portal keeps
	// the ones it sees going by (a plain subscription takes nothing from
	// the queue).
	sub, err := js.Conn().Subscribe(events.SubjectPlans+".>", func(m *nats.Msg) {
		r := events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data, Time: time.Now(), Live: true}
		p.take(events.StreamPlans, p.proj.ApplyPlan, r)
	})
	if err != nil {
		return fmt.Errorf("subscribe to plans: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	watches := []struct {
		stream  string
		filters []string
		apply   func(events.Received) error
	}{
		{events.StreamObserved, []string{events.SubjectZones + ".>", events.SubjectObserved + ".>"}, p.proj.ApplyObserved},
		{events.StreamDesired, []string{events.SubjectDesired + ".>"}, p.proj.ApplyDesired},
		{events.StreamResults, []string{events.SubjectResults + ".>"}, p.proj.ApplyResult},
		{events.StreamHeld, []string{events.SubjectHeld + ".>"}, p.proj.ApplyHeld},
	}
	var caughtUp []<-chan struct{}
	for _, w := range watches {
		c, err := events.Watch(ctx, js, w.stream, w.filters, func(r events.Received) { p.take(w.stream, w.apply, r) })
		if err != nil {
			return err
		}
		caughtUp = append(caughtUp, c)
	}
	if p.cfg.Resolver != "" {
		go p.probe(ctx)
	}
	if p.cfg.Listen != "" {
		p.serve(ctx, js)
	}
	for _, c := range caughtUp {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.ready.Store(true)
	p.log.Info("portal caught up with the streams", "names", p.proj.Len())
	// Pending turns into not in sync once --portal-grace (minutes) ran
	// out: a look every quarter of it, at most every 10 s, is soon
	// enough, and quiet at rest.
	t := time.NewTicker(min(10*time.Second, max(p.cfg.Grace/4, 100*time.Millisecond)))
	defer t.Stop()
	for {
		p.proj.Reevaluate()
		counts := p.proj.Counts()
		for _, st := range projection.Statuses {
			namesGauge.WithLabelValues(string(st)).Set(float64(counts[st]))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// take applies one message; bad input is counted, logged and skipped.
func (p *Portal) take(stream string, apply func(events.Received) error, r events.Received) {
	if err := apply(r); err != nil {
		rejected.WithLabelValues(stream).Inc()
		p.log.Warn("message skipped", "stream", stream, "subject", r.Subject, "seq", r.Seq, "err", err)
	}
}

// probe checks names with DNS as they change, and again every interval.
func (p *Portal) probe(ctx context.Context) {
	resolver := probe.Resolver{Addr: p.cfg.Resolver, Timeout: p.cfg.DNSTimeout}
	pr := probe.New(probe.Options{Workers: p.cfg.DNSWorkers, Interval: p.cfg.DNSInterval, Soon: time.Second},
		func(ctx context.Context, name string) {
			target, ok := p.proj.CheckTarget(name)
			if !ok {
				return
			}
			a := resolver.Ask(ctx, name, target.Types)
			resolveSeconds.Observe(a.Latency.Seconds())
			c := projection.Check{Time: time.Now(), Latency: a.Latency.Seconds(), Answers: a.Records, Version: target.Version}
			if a.Err != nil {
				resolveErrors.Inc()
				c.Error = a.Err.Error()
			}
			p.proj.SetCheck(name, c)
		})
	sub := p.proj.Subscribe()
	go pr.Run(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.C:
		}
		for _, name := range sub.Drain() {
			if target, ok := p.proj.CheckTarget(name); ok {
				if !target.Checked {
					pr.Changed(name)
				}
			} else {
				pr.Forget(name)
			}
		}
	}
}

// serve starts the page and the API. A port already taken does not stop
// the pipeline: the portal says so in its log.
func (p *Portal) serve(ctx context.Context, js jetstream.JetStream) {
	ln, err := net.Listen("tcp", p.cfg.Listen)
	if err != nil {
		p.log.Error("the portal's page cannot listen; the portal goes on without it", "err", fmt.Errorf("--portal-listen: %w", err))
		return
	}
	p.addr.Store(ln.Addr().String())
	h := web.New(ctx, p.proj, func(ctx context.Context, name string) ([]history.Entry, error) {
		return history.Read(ctx, js, name, p.planEntries(name)...)
	}, p.log)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	p.log.Info("portal serving", "web", "http://"+ln.Addr().String()+"/")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("portal stopped serving", "err", err)
		}
	}()
}

// planEntries is the last plan the portal saw for name, as history: the
// plans stream no longer holds an applied plan.
func (p *Portal) planEntries(name string) []history.Entry {
	v, ok := p.proj.Get(name)
	if !ok || v.Plan == nil {
		return nil
	}
	pl := v.Plan
	e := history.Entry{Subject: pl.Subject, Seq: pl.Seq, Time: pl.Time, EventID: pl.EventID, Causation: pl.Causation}
	return []history.Entry{history.PlanEntry(e, &events.Plan{ID: pl.ID, Provider: pl.Provider, Zone: pl.Zone, Changes: pl.Changes})}
}
