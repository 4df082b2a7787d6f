package stage

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events/leader"
)

// Leased is a stage of which one replica at a time may work: the one
// holding the lease LeaseKey names (events.DedupLease, ...). Every stage
// is: two replicas of a planner would publish duplicate plans, two
// collectors of one cluster would fight over its marks.
type Leased interface {
	LeaseKey() string
}

// SelfElecting is a stage whose work is elected in parts, a lease each
// (the applier with --dnsproviders: one per declared provider): Elected
// hands it the election rather than run it whole under one lease.
type SelfElecting interface {
	Elect(e Election, logger *slog.Logger) (Runner, error)
}

// Election is how the replicas of a stage elect the one that works
// (events/leader): the --leader-elect flags, named and defaulted as
// kube-controller-manager's.
type Election struct {
	Enabled bool
	leader.Config
}

// RegisterFlags adds the --leader-elect flags.
func (e *Election) RegisterFlags(fs *flag.FlagSet) {
	d := leader.Defaults()
	fs.BoolVar(&e.Enabled, "leader-elect", true,
		"run only while holding this stage's lease on the bus, so that replicas stand by rather than work twice")
	fs.StringVar(&e.Identity, "leader-elect-identity", d.Identity, "who this replica is in the lease (the pod name)")
	fs.DurationVar(&e.LeaseDuration, "leader-elect-lease-duration", d.LeaseDuration,
		"how long a standby waits, after the lease last changed, before it takes over from a leader that stopped renewing")
	fs.DurationVar(&e.RenewDeadline, "leader-elect-renew-deadline", d.RenewDeadline,
		"how long a leader keeps working without renewing its lease; shorter than the lease duration")
	fs.DurationVar(&e.RetryPeriod, "leader-elect-retry-period", d.RetryPeriod,
		"how often the leader renews and standbys try to take over")
}

// Elected returns svc to run only while it holds its lease, if svc is
// Leased and the election is on; svc as it is otherwise.
func (e Election) Elected(svc Runner, logger *slog.Logger) (Runner, error) {
	if se, ok := svc.(SelfElecting); ok && e.Enabled {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		return se.Elect(e, logger)
	}
	l, ok := svc.(Leased)
	if !e.Enabled || !ok {
		return svc, nil
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &elected{svc: svc, key: l.LeaseKey(), cfg: e.Config, log: logger}, nil
}

// elected runs a stage while it holds its lease.
type elected struct {
	svc Runner
	key string
	cfg leader.Config
	log *slog.Logger
	el  atomic.Pointer[leader.Elector]
}

func (s *elected) Run(ctx context.Context, js jetstream.JetStream) error {
	// A bucket just created may not be found yet on every node of a
	// clustered NATS: look again rather than exit.
	el, err := leader.New(ctx, js, s.key, s.cfg, s.log)
	for err != nil {
		s.log.Warn("waiting for the lease bucket", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.cfg.RetryPeriod):
		}
		el, err = leader.New(ctx, js, s.key, s.cfg, s.log)
	}
	s.el.Store(el)
	return el.Run(ctx, func(ctx context.Context) error { return s.svc.Run(ctx, js) })
}

// Ready is the stage's readiness while it leads; a standby is ready while
// it can see the lease, to take over.
func (s *elected) Ready() error {
	el := s.el.Load()
	switch {
	case el == nil:
		return errors.New("not connected to the lease bucket yet")
	case el.Leading():
		return s.svc.Ready()
	}
	return el.Healthy()
}
