package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// AllInOne is the all-in-one's configuration beyond the stages' own flags:
// `zonestream` with no command, and what the demo and the whole-system
// tests run in process (NewAllInOne, Parse, Run).
type AllInOne struct {
	opts    stage.Options
	dataDir string
	// dataDirSet is whether --data-dir was given, rather than defaulted.
	dataDirSet bool
	natsListen string
	// natsListenBeyondLoopback lets the embedded NATS listen on a
	// non-loopback address.
	natsListenBeyondLoopback bool
	stages                   []stage.Definition
	shared                   stage.Shared
	fs                       *flag.FlagSet
	// ignored are the flags of ExternalDNS the command line gave that
	// zonestream does nothing with.
	ignored *stage.IgnoredFlags
}

// NewAllInOne is the all-in-one with every stage and their flags
// registered, none parsed yet.
func NewAllInOne() *AllInOne {
	a := &AllInOne{fs: flag.NewFlagSet("zonestream", flag.ContinueOnError)}
	stage.Describe(a.fs, stage.Help{Usage: "zonestream [COMMAND] [flags]", Summary: commands})
	a.opts.RegisterFlags(a.fs)
	a.opts.Election.RegisterFlags(a.fs)
	a.fs.StringVar(&a.dataDir, "data-dir", defaultDataDir(), "where the embedded NATS stores its streams")
	a.fs.StringVar(&a.natsListen, "nats-listen", "127.0.0.1:4222", "address the embedded NATS listens on (port 0: any free port); loopback only, unless --nats-listen-beyond-loopback")
	a.fs.BoolVar(&a.natsListenBeyondLoopback, "nats-listen-beyond-loopback", false,
		"let the embedded NATS, which has no users, listen on a non-loopback --nats-listen: whoever reaches it can write your DNS")
	var groups stage.SharedGroups
	providersTaken := false
	for _, def := range stages {
		d := def()
		stage.Grouped(a.fs, stage.StageGroup(d.Name), func() { d.RegisterFlags(a.fs) })
		if d.Taken != nil {
			stage.Took(a.fs, d.Taken())
		}
		a.stages, groups = append(a.stages, d), groups|d.Shared
		providersTaken = providersTaken || d.TakeArgs != nil
	}
	a.shared.RegisterFlags(a.fs, groups)
	a.ignored = stage.AcceptExternalDNSFlags(a.fs, providersTaken)
	return a
}

// Parse parses args; the embedded NATS is used unless --nats-url (or
// $ZS_NATS_URL) names another.
func (a *AllInOne) Parse(args []string) (embedded bool, err error) {
	for _, d := range a.stages {
		if d.TakeArgs != nil {
			args = stage.Take(a.fs, args, d.TakeArgs)
		}
	}
	if err := stage.Parse(a.fs, args); err != nil {
		return false, err
	}
	if a.fs.NArg() > 0 {
		return false, stage.Usagef(a.fs, "unexpected arguments %q (zonestream --help lists the commands)", a.fs.Args())
	}
	embedded = os.Getenv("ZS_NATS_URL") == ""
	a.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nats-url":
			embedded = false
		case "data-dir":
			a.dataDirSet = true
		}
	})
	return embedded, nil
}

// FlagSet is the all-in-one's command line: every stage's flags and its
// own.
func (a *AllInOne) FlagSet() *flag.FlagSet { return a.fs }

// Logger is the logger --log-level and --log-format ask for.
func (a *AllInOne) Logger() (*slog.Logger, error) { return a.opts.Logger() }

// WithoutStages leaves the stages named out of those Run runs (a
// benchmark of the pipeline behind the collector runs no collector).
func (a *AllInOne) WithoutStages(names ...string) {
	a.stages = slices.DeleteFunc(a.stages, func(d stage.Definition) bool { return slices.Contains(names, d.Name) })
}

// runAll runs every stage in one process until SIGINT/SIGTERM.
func runAll(args []string) error {
	a := NewAllInOne()
	embedded, err := a.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if a.opts.Version {
		fmt.Println(stage.Version())
		return nil
	}
	logger, err := a.opts.Logger()
	if err != nil {
		return err
	}
	a.ignored.Log(logger)
	defer stage.PaceGC(logger)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := stage.WithPassDeadline(ctx, a.fs)
	defer cancel()
	err = a.Run(ctx, embedded, logger, nil)
	if exceeded := stage.PassDeadlineExceeded(ctx); exceeded != nil {
		return exceeded
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// SIGINT or SIGTERM, also while waiting for NATS: a stop asked for.
		return nil
	}
	return err
}

// Run runs every stage until ctx ends. started, if not nil, is told the
// NATS URL once everything runs (the demo uses it).
func (a *AllInOne) Run(ctx context.Context, embedded bool, logger *slog.Logger, started func(natsURL string)) error {
	svcs, err := a.newStages(embedded, logger)
	if err != nil {
		return err
	}
	url := a.opts.NatsURL
	connect := []stage.ConnectOption{stage.WithStreams(events.WithReplicas(a.opts.Replicas))}
	// The embedded NATS has no users: it listens on loopback only
	// (embedded.go), and credentials are for an external server.
	creds := a.opts.Credentials
	if embedded {
		embeddedURL, options, stop, err := a.startEmbedded(logger)
		defer stop()
		if err != nil {
			return err
		}
		url = embeddedURL
		connect = append(connect, options...)
		creds = stage.Credentials{}
	}
	if err := stage.ServeOps(ctx, a.opts.MetricsAddress, a.ready(svcs), logger, a.opts.Pprof); err != nil {
		return err
	}
	nc, js, err := stage.Connect(ctx, url, "zonestream", creds, logger, connect...)
	if err != nil {
		return err
	}
	defer nc.Close()
	if started != nil {
		started(url)
	}
	ctx, cancel := stage.UntilCutOff(ctx)
	defer cancel()
	err = a.runStages(ctx, js, svcs)
	_ = nc.Drain()
	if cut := stage.CutOff(ctx); cut != nil {
		return cut
	}
	if errors.Is(err, stage.ErrFinished) {
		return stage.Finished(errors.Unwrap(err)) // nil: the pass converged
	}
	return err
}

// newStages builds every stage the all-in-one runs, each behind a leader
// election unless the bus is the embedded one.
func (a *AllInOne) newStages(embedded bool, logger *slog.Logger) ([]stage.Runner, error) {
	var svcs []stage.Runner
	// The embedded NATS on loopback is this process' alone: no other
	// cluster's collector reaches it.
	a.shared.PrivateBus = embedded && !a.natsListenBeyondLoopback
	for _, d := range a.stages {
		svc, err := d.New(&a.shared, logger.With("service", d.Name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		// The embedded NATS is this process' alone: no replica to elect.
		if !embedded {
			if svc, err = a.opts.Election.Elected(svc, logger.With("service", d.Name)); err != nil {
				return nil, err
			}
		}
		svcs = append(svcs, svc)
	}
	return svcs, nil
}

// startEmbedded starts the embedded NATS JetStream on --data-dir (in
// memory when it cannot be written) and returns its URL, the options to
// connect to it in process, and what stops it, which is to be called
// even when an error is returned.
func (a *AllInOne) startEmbedded(logger *slog.Logger) (url string, connect []stage.ConnectOption, stop func(), err error) {
	stop = func() {}
	if err := checkEmbeddedListen(a.natsListen, a.natsListenBeyondLoopback, logger); err != nil {
		return "", nil, stop, err
	}
	store, err := embeddedStore(a.dataDir, a.dataDirSet, logger)
	if err != nil {
		return "", nil, stop, err
	}
	stop = store.cleanup
	ns, err := StartEmbeddedNATS(store.dir, a.natsListen, store.memory)
	if err != nil {
		return "", nil, stop, err
	}
	stop = func() {
		ns.Shutdown()
		ns.WaitForShutdown()
		store.cleanup()
	}
	url = ns.ClientURL()
	connect = append(connect, stage.InProcess(ns))
	if store.memory {
		connect = append(connect, stage.WithStreams(events.WithStorage(jetstream.MemoryStorage)))
	}
	logger.Info("embedded NATS JetStream running", "url", url, "data_dir", store.dir, "memory", store.memory)
	return url, connect, stop, nil
}

// ready is the all-in-one's readiness: every stage's.
func (a *AllInOne) ready(svcs []stage.Runner) func() error {
	return func() error {
		var errs []error
		for i, s := range svcs {
			if err := s.Ready(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", a.stages[i].Name, err))
			}
		}
		return errors.Join(errs...)
	}
}

// runStages runs every stage on js until ctx ends or one fails or
// finishes (--once), which ends the others.
func (a *AllInOne) runStages(ctx context.Context, js jetstream.JetStream, svcs []stage.Runner) error {
	g, gctx := errgroup.WithContext(ctx)
	for i, s := range svcs {
		g.Go(func() (err error) {
			// A profile of the all-in-one tells the stages apart by this
			// label; every goroutine a stage starts inherits it.
			pprof.Do(gctx, pprof.Labels("stage", a.stages[i].Name), func(ctx context.Context) { err = s.Run(ctx, js) })
			if err != nil && !errors.Is(err, context.Canceled) {
				// A pass that finished (--once) ends the others too.
				return fmt.Errorf("%s: %w", a.stages[i].Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "zonestream")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "zonestream")
	}
	return ".zonestream"
}
