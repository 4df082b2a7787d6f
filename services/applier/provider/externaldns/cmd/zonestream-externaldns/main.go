// Command zonestream-externaldns serves one provider of ExternalDNS over
// ExternalDNS' webhook protocol, as a sidecar of an applier built
// without -tags externaldns (--provider=webhook):
//
//	zonestream-externaldns --provider=aws --aws-zone-type=public --domain-filter=example.org
//	zonestream applier --provider=webhook --webhook-provider-url=http://127.0.0.1:8888 ...
//
// It takes ExternalDNS' command line as it is, and --webhook-address
// (127.0.0.1:8888, where ExternalDNS' --webhook-server listens). zonestream
// built with -tags externaldns drives the same providers in process.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zonestream-externaldns:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	addr, rest := webhookAddress(args)
	cfg, err := externaldns.Parse(rest)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// ExternalDNS' own --log-format and --log-level, and its lines: one
	// format for the provider's (logrus) lines and the adapter's.
	log, err := (&stage.Options{LogFormat: cfg.LogFormat, LogLevel: cfg.LogLevel}).Logger()
	if err != nil {
		return err
	}
	log.Info("serving an ExternalDNS provider over the webhook protocol", "provider", cfg.Provider, "address", l.Addr().String())
	return externaldns.Serve(ctx, cfg, l, log)
}

// webhookAddress takes --webhook-address out of args, which are otherwise
// ExternalDNS' own.
func webhookAddress(args []string) (string, []string) {
	addr := "127.0.0.1:8888"
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case strings.HasPrefix(a, "--webhook-address="):
			addr = strings.TrimPrefix(a, "--webhook-address=")
		case a == "--webhook-address" && i+1 < len(args):
			addr = args[i+1]
			i++
		default:
			rest = append(rest, a)
		}
	}
	return addr, rest
}
