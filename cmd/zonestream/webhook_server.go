package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	fs := flag.NewFlagSet("webhook-server", flag.ContinueOnError)
	var (
		cfg            applier.Config
		opts           stage.Options
		address        string
		healthAddress  string
		domainFilter   stage.StringList
		excludeDomains stage.StringList
		regexFilter    string
		regexExclusion string
	)
	cfg.RegisterFlags(fs)
	fs.StringVar(&address, "webhook-address", "127.0.0.1:8888", "address of the webhook protocol (keep it on loopback: it has no authentication)")
	fs.StringVar(&healthAddress, "webhook-health-address", "127.0.0.1:8080", "address of /healthz and /metrics; empty disables it")
	fs.Var(&domainFilter, "domain-filter", "negotiate and serve only these domains (repeatable; default: the provider's zones)")
	fs.Var(&excludeDomains, "exclude-domains", "exclude these domains (repeatable)")
	fs.StringVar(&regexFilter, "regex-domain-filter", "", "negotiate and serve only domains matching this regular expression (instead of --domain-filter)")
	fs.StringVar(&regexExclusion, "regex-domain-exclusion", "", "exclude domains matching this regular expression (with --regex-domain-filter)")
	fs.StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&opts.LogFormat, "log-format", "text", "log format: text or json")
	if err := stage.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("webhook-server: unexpected arguments %v", fs.Args())
	}
	logger, err := opts.Logger()
	if err != nil {
		return err
	}
	logger = logger.With("service", "webhook-server")
	p, err := applier.NewProvider(cfg, logger)
	if err != nil {
		return err
	}
	filter := webhook.DomainFilter{Include: domainFilter, Exclude: excludeDomains}
	if regexFilter != "" || regexExclusion != "" {
		filter = webhook.DomainFilter{RegexInclude: regexFilter, RegexExclude: regexExclusion}
	}
	if err := filter.Validate(); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	wcfg := cfg.Webhook
	if err := wcfg.Validate(); err != nil {
		return err
	}
	api := &http.Server{
		Handler:           webhook.NewServer(p, webhook.ServerOptions{DomainFilter: filter, Logger: logger}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       wcfg.ReadTimeout,
		WriteTimeout:      wcfg.WriteTimeout,
	}
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--webhook-address: %w", err)
	}
	servers := []*http.Server{api}
	errc := make(chan error, 2)
	if healthAddress != "" {
		hln, err := net.Listen("tcp", healthAddress)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--webhook-health-address: %w", err)
		}
		health := &http.Server{Handler: webhook.NewHealthHandler(), ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, health)
		logger.Info("serving /healthz and /metrics", "address", hln.Addr().String())
		go func() { errc <- health.Serve(hln) }()
	}
	logger.Info("serving the ExternalDNS webhook protocol", "address", ln.Addr().String(), "provider", cfg.Provider)
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
