package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
	"github.com/zonestream/zonestream/stage"
)

// webhookServer serves one zonestream provider (--provider and its flags,
// as the applier takes them) over ExternalDNS' webhook protocol, so that
// ExternalDNS (--provider=webhook) or zonestream's webhook provider can
// drive it: the protocol on --webhook-address, /healthz and /metrics on
// --webhook-health-address.
func webhookServer(args []string) error {
	f, err := parseWebhookServerFlags(args)
	if err != nil || f == nil {
		return err
	}
	logger, err := f.opts.Logger()
	if err != nil {
		return err
	}
	logger = logger.With("service", "webhook-server")
	p, err := applier.NewProvider(f.cfg, logger)
	if err != nil {
		return err
	}
	filter, err := f.filter()
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	wcfg := f.cfg.Webhook
	if err := wcfg.Validate(); err != nil {
		return err
	}
	maxBody := wcfg.MaxBodySize
	if maxBody == 0 {
		maxBody = -1 // --webhook-provider-max-body-size=0: no bound
	}
	api := &http.Server{
		Handler:           webhook.NewServer(p, webhook.ServerOptions{DomainFilter: filter, Logger: logger, MaxBodySize: maxBody}),
		ReadHeaderTimeout: wcfg.ReadHeaderTimeout,
		ReadTimeout:       wcfg.ReadTimeout,
		WriteTimeout:      wcfg.WriteTimeout,
		IdleTimeout:       wcfg.IdleTimeout,
	}
	return serveWebhook(ctx, logger, api, f)
}

// webhookServerFlags is webhook-server's command line: the applier's
// provider flags, the two addresses, ExternalDNS' domain filter flags and
// the log flags.
type webhookServerFlags struct {
	cfg            applier.Config
	opts           stage.Options
	address        string
	healthAddress  string
	domainFilter   stage.StringList
	excludeDomains stage.StringList
	regexFilter    string
	regexExclusion string
}

// parseWebhookServerFlags reads webhook-server's command line; nil flags
// and no error mean -help was asked for and answered.
func parseWebhookServerFlags(args []string) (*webhookServerFlags, error) {
	fs := flag.NewFlagSet("webhook-server", flag.ContinueOnError)
	var f webhookServerFlags
	f.cfg.RegisterFlags(fs)
	fs.StringVar(&f.address, "webhook-address", "127.0.0.1:8888", "address of the webhook protocol (keep it on loopback: it has no authentication)")
	fs.StringVar(&f.healthAddress, "webhook-health-address", "127.0.0.1:8080", "address of /healthz and /metrics; empty disables it")
	fs.Var(&f.domainFilter, "domain-filter", "negotiate and serve only these domains (repeatable; default: the provider's zones)")
	fs.Var(&f.excludeDomains, "exclude-domains", "exclude these domains (repeatable)")
	fs.StringVar(&f.regexFilter, "regex-domain-filter", "", "negotiate and serve only domains matching this regular expression (instead of --domain-filter)")
	fs.StringVar(&f.regexExclusion, "regex-domain-exclusion", "", "exclude domains matching this regular expression (with --regex-domain-filter)")
	fs.StringVar(&f.opts.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.opts.LogFormat, "log-format", "text", "log format: text or json")
	if err := stage.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("webhook-server: unexpected arguments %v", fs.Args())
	}
	return &f, nil
}

// filter is the domain filter the flags ask for: the regular expressions
// when either is given, else the lists.
func (f *webhookServerFlags) filter() (webhook.DomainFilter, error) {
	filter := webhook.DomainFilter{Include: f.domainFilter, Exclude: f.excludeDomains}
	if f.regexFilter != "" || f.regexExclusion != "" {
		filter = webhook.DomainFilter{RegexInclude: f.regexFilter, RegexExclude: f.regexExclusion}
	}
	return filter, filter.Validate()
}

// serveWebhook serves api on --webhook-address, and /healthz and /metrics
// on --webhook-health-address unless it is empty, until ctx ends or a
// server fails; then it shuts both down.
func serveWebhook(ctx context.Context, logger *slog.Logger, api *http.Server, f *webhookServerFlags) error {
	ln, err := net.Listen("tcp", f.address)
	if err != nil {
		return fmt.Errorf("--webhook-address: %w", err)
	}
	servers := []*http.Server{api}
	errc := make(chan error, 2)
	if f.healthAddress != "" {
		hln, err := net.Listen("tcp", f.healthAddress)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--webhook-health-address: %w", err)
		}
		health := &http.Server{Handler: webhook.NewHealthHandler(), ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, health)
		logger.Info("serving /healthz and /metrics", "address", hln.Addr().String())
		go func() { errc <- health.Serve(hln) }()
	}
	logger.Info("serving the ExternalDNS webhook protocol", "address", ln.Addr().String(), "provider", f.cfg.Provider)
	go func() { errc <- api.Serve(ln) }()

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
