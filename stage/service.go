// Package stage is the plumbing every zonestream service process shares:
// NATS connection, stream set-up, logging, the metrics and health endpoint,
// signal handling. The services themselves stay plain: a Run method that
// takes a JetStream handle and a Ready method.
package stage

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zonestream/zonestream/events"
)

// Runner is one stage of the pipeline, as a process runs it.
type Runner interface {
	// Run works until ctx ends; an error means it cannot go on.
	Run(ctx context.Context, js jetstream.JetStream) error
	// Ready returns nil once the service has caught up and is healthy.
	Ready() error
}

// Options are the flags every service process has.
type Options struct {
	NatsURL        string
	MetricsAddress string
	// Pprof serves net/http/pprof on the metrics address.
	Pprof     bool
	LogLevel  string
	LogFormat string
	Replicas  int
	// Version (--version): print the version and exit.
	Version bool
	// Credentials authenticate the process to NATS.
	Credentials Credentials
	// Election elects the replica that works (registered apart: a stage's
	// flags, not every process').
	Election Election
}

// RegisterFlags adds the common flags.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.NatsURL, "nats-url", envOr("ZS_NATS_URL", nats.DefaultURL), "NATS server URL(s), comma-separated")
	fs.StringVar(&o.MetricsAddress, "metrics-address", ":7979", "address of the /metrics, /healthz and /readyz endpoint; empty disables it")
	fs.BoolVar(&o.Pprof, "pprof", false, "serve /debug/pprof/ on --metrics-address (profiles on demand; off by default as it exposes internals)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error (and ExternalDNS' trace, warning, fatal, panic)")
	fs.StringVar(&o.LogFormat, "log-format", "text", "log format: text or json")
	fs.IntVar(&o.Replicas, "nats-stream-replicas", 1, "replicas of each JetStream stream (3 on a clustered NATS)")
	fs.BoolVar(&o.Version, "version", false, "print the version and exit")
	o.Credentials.RegisterFlags(fs)
}

// Logger builds the process logger from the flags.
func (o *Options) Logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logrusLevel(o.LogLevel))); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	h, err := NewLogHandler(os.Stderr, o.LogFormat, level)
	if err != nil {
		return nil, err
	}
	return slog.New(h), nil
}

// logrusLevel maps ExternalDNS' (logrus') level names that slog lacks to
// slog's: ExternalDNS' Helm chart offers panic, debug, info, warning,
// error and fatal, and its --log-level takes trace too. Fatal and panic
// are error: zonestream logs nothing above it.
func logrusLevel(level string) string {
	switch strings.ToLower(level) {
	case "trace":
		return "debug"
	case "warning":
		return "warn"
	case "fatal", "panic":
		return "error"
	}
	return level
}

// Connect connects to NATS with creds, retrying until it is there, and
// makes sure the streams exist. What the server refuses to creds is
// counted (PermissionViolations) and logged.
func Connect(ctx context.Context, url, name string, creds Credentials, logger *slog.Logger, opts ...ConnectOption) (*nats.Conn, jetstream.JetStream, error) {
	var o connectOptions
	for _, opt := range opts {
		opt(&o)
	}
	nc, err := Dial(url, name, creds, logger, append([]nats.Option{
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { logger.Info("reconnected to NATS", "url", c.ConnectedUrlRedacted()) }),
	}, o.nats...)...)
	if err != nil {
		return nil, nil, err
	}
	js, err := creds.JetStream(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	for {
		if !nc.IsConnected() {
			// Not JetStream nor the streams: the server itself is not
			// there. Say why, as the dial does (connection refused, no
			// such host, timeout).
			logger.Warn("NATS unreachable, retrying every 2s", "err", unreachable(url, nc))
		} else if err = events.EnsureStreams(ctx, js, o.streams...); err == nil {
			return nc, js, nil
		} else {
			logger.Warn("waiting for JetStream and its streams (where these credentials may not create them, "+
				"an operator runs zonestream streams ensure)", "url", url, "err", err)
		}
		select {
		case <-ctx.Done():
			nc.Close()
			return nil, nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// unreachable says why no server of urls (comma-separated) answers, by
// dialing each as the client does: "connection refused to
// nats://127.0.0.1:4222". The URLs' user information is left out.
func unreachable(urls string, nc *nats.Conn) error {
	var errs []error
	for _, raw := range strings.Split(urls, ",") {
		raw = strings.TrimSpace(raw)
		if !strings.Contains(raw, "://") {
			raw = "nats://" + raw
		}
		u, err := neturl.Parse(raw)
		if err != nil {
			continue
		}
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), strconv.Itoa(nats.DefaultPort))
		}
		where := u.Scheme + "://" + host
		conn, err := net.DialTimeout("tcp", host, 2*time.Second)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			errs = append(errs, fmt.Errorf("connection refused to %s", where))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		default:
			conn.Close()
			if last := nc.LastError(); last != nil {
				errs = append(errs, fmt.Errorf("%s answers, but NATS does not take the connection: %w", where, last))
			} else {
				errs = append(errs, fmt.Errorf("%s answers, but the NATS connection is not up yet", where))
			}
		}
	}
	return errors.Join(errs...)
}

// Dial connects to NATS with creds and the extra options. What the server
// refuses to creds is counted (PermissionViolations) and logged.
func Dial(url, name string, creds Credentials, logger *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	auth, err := creds.Options()
	if err != nil {
		return nil, err
	}
	// A refused subscription fails its reads rather than staying silent.
	opts := append(auth, nats.Name(name), nats.ErrorHandler(asyncErrors(logger, creds.InboxPrefix)), nats.PermissionErrOnSubscribe(true))
	nc, err := nats.Connect(url, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", url, err)
	}
	return nc, nil
}

// ServeOps serves /metrics, /healthz and /readyz until ctx ends.
func ServeOps(ctx context.Context, addr string, ready func() error, logger *slog.Logger, pprofOn ...bool) error {
	if addr == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	if len(pprofOn) > 0 && pprofOn[0] {
		servePprof(mux)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	logger.Info("serving metrics and health", "address", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics endpoint stopped", "err", err)
		}
	}()
	return nil
}

// MainArgs runs one stage as its own process against an external NATS
// (zonestream <stage> args...) until SIGINT or SIGTERM.
func MainArgs(def Definition, args []string) error {
	fs := flag.NewFlagSet(def.Name, flag.ContinueOnError)
	Describe(fs, Help{Usage: "zonestream " + def.Name + " [flags]",
		Summary: "Runs the " + def.Name + " stage alone, against the NATS of --nats-url (zonestream --help: the other commands)."})
	var opts Options
	opts.RegisterFlags(fs)
	opts.Election.RegisterFlags(fs)
	construct := def.Standalone(fs)
	ignored := AcceptExternalDNSFlags(fs, def.TakeArgs != nil)
	if def.TakeArgs != nil {
		args = Take(fs, args, def.TakeArgs)
	}
	if err := Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if opts.Version {
		fmt.Println(Version())
		return nil
	}
	logger, err := opts.Logger()
	if err != nil {
		return err
	}
	logger = logger.With("service", def.Name)
	ignored.Log(logger)
	return run(def.Name, opts, fs, construct, logger)
}

func run(name string, opts Options, fs *flag.FlagSet, construct func(*slog.Logger) (Runner, error), logger *slog.Logger) error {
	svc, err := construct(logger)
	if err != nil {
		return err
	}
	if svc, err = opts.Election.Elected(svc, logger); err != nil {
		return err
	}
	defer PaceGC(logger)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancelPass := WithPassDeadline(ctx, fs)
	defer cancelPass()
	if err := ServeOps(ctx, opts.MetricsAddress, svc.Ready, logger, opts.Pprof); err != nil {
		return err
	}
	nc, js, err := Connect(ctx, opts.NatsURL, "zonestream-"+name, opts.Credentials, logger, WithStreams(events.WithReplicas(opts.Replicas)))
	if exceeded := PassDeadlineExceeded(ctx); exceeded != nil {
		return exceeded
	}
	if err != nil && ctx.Err() != nil {
		// SIGINT or SIGTERM while waiting for NATS: a stop asked for.
		logger.Info("stopped while waiting for NATS", "url", opts.NatsURL)
		return nil
	}
	if err != nil {
		return err
	}
	defer nc.Drain()
	ctx, cancel := UntilCutOff(ctx)
	defer cancel()
	err = svc.Run(ctx, js)
	if cut := CutOff(ctx); cut != nil {
		return cut
	}
	if exceeded := PassDeadlineExceeded(ctx); exceeded != nil {
		return exceeded
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return Finished(err)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// StringList is a flag that may be repeated and also takes comma-separated
// values, as ExternalDNS' --domain-filter and --source do.
type StringList []string

func (l *StringList) String() string { return strings.Join(*l, ",") }

// Set appends the comma-separated values of one occurrence.
func (l *StringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
