package dnsprovider

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
)

// Stage is the applier's stage def (applier.Stage, or the one of a build
// with -tags externaldns) with --dnsproviders and --dnsprovider-namespace:
// with --dnsproviders the process also runs one applier per DNSProvider
// and ClusterDNSProvider, beside the applier of --provider when one is
// given. build builds the providers that are not zonestream's own (nil:
// they are refused, ProviderNotAvailable).
func Stage(def stage.Definition, build Builder) stage.Definition {
	var (
		cfg   Config
		flags *flag.FlagSet
	)
	inner := def.RegisterFlags
	def.RegisterFlags = func(fs *flag.FlagSet) {
		flags = fs
		inner(fs)
		cfg.RegisterFlags(fs)
	}
	newApplier := def.New
	def.New = func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
		if !cfg.Enabled {
			return newApplier(shared, logger)
		}
		r := &withDeclared{}
		if f := flags.Lookup("provider"); f != nil && f.Value.String() != "" {
			var err error
			if r.flagged, err = newApplier(shared, logger); err != nil {
				return nil, err
			}
		}
		base, err := baseConfig(flags)
		if err != nil {
			return nil, err
		}
		base.Share(shared)
		cfg.Applier = base
		cfg.Kubeconfig, cfg.Master = shared.Kubeconfig, shared.Master
		if r.controller, err = New(cfg, build, logger); err != nil {
			return nil, err
		}
		return r, nil
	}
	return def
}

// baseConfig is the applier configuration of the command line fs (the
// flags set on it, the defaults of the others): what every declared
// provider's applier starts from. The flags of the provider declared by
// flags are not carried over: a DNSProvider that gives no rfc2136-host
// must not reach the platform's server, nor the platform's zone.
func baseConfig(fs *flag.FlagSet) (applier.Config, error) {
	var cfg applier.Config
	own := flag.NewFlagSet("applier", flag.ContinueOnError)
	cfg.RegisterFlags(own)
	secret := stage.SecretFlags(own)
	var err error
	fs.Visit(func(f *flag.Flag) {
		// A flag.Func (--min-ttl) shows no value: what it set is not
		// carried over.
		if own.Lookup(f.Name) != nil && !secret[f.Name] && !providerFlag(f.Name) && f.Value.String() != "" && err == nil {
			err = own.Set(f.Name, f.Value.String())
		}
	})
	return cfg, err
}

// providerFlag says whether name is a flag of one provider (rfc2136-host)
// or names the provider declared by flags (--provider, --provider-name),
// rather than one of every applier's (--interval, --default-ttl).
func providerFlag(name string) bool {
	kind, _, _ := strings.Cut(name, "-")
	return name == "provider" || name == "provider-name" || applier.NativeProvider(kind)
}

// withDeclared runs the applier of --provider (when given) and the
// controller of the declared providers side by side.
type withDeclared struct {
	flagged    stage.Runner // nil: only declared providers
	controller *Controller
}

var _ stage.SelfElecting = (*withDeclared)(nil)

// Elect puts the applier of --provider under its lease, as the stage
// alone would be, and gives each declared provider its own.
func (r *withDeclared) Elect(e stage.Election, logger *slog.Logger) (stage.Runner, error) {
	if r.flagged != nil {
		var err error
		if r.flagged, err = e.Elected(r.flagged, logger); err != nil {
			return nil, err
		}
	}
	el := e.Config
	r.controller.cfg.Election = &el
	return r, nil
}

// Run runs both until ctx ends or one of them fails, which ends the other.
func (r *withDeclared) Run(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	run := func(s stage.Runner) {
		err := s.Run(ctx, js)
		once.Do(func() { first = err })
		cancel()
	}
	wg.Go(func() { run(r.controller) })
	if r.flagged != nil {
		wg.Go(func() { run(r.flagged) })
	}
	wg.Wait()
	return first
}

// Ready is both's readiness.
func (r *withDeclared) Ready() error {
	err := r.controller.Ready()
	if r.flagged != nil {
		err = errors.Join(err, r.flagged.Ready())
	}
	return err
}
