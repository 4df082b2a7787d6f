// Command zonestream-externaldns is the applier driving any provider of
// ExternalDNS, with ExternalDNS' flags beside the applier's:
//
//	zonestream-externaldns applier --nats-url=... --provider=aws --aws-zone-type=public
//
// or serves one over ExternalDNS' webhook protocol, for the applier's
// --provider=webhook:
//
//	zonestream-externaldns --provider=aws --aws-zone-type=public --domain-filter=example.org
//	zonestream applier --provider=webhook --webhook-provider-url=http://127.0.0.1:8888 ...
//
// It takes ExternalDNS' command line as it is, and --webhook-address
// (127.0.0.1:8888, where ExternalDNS' --webhook-server listens). It is a
// binary of its own so that zonestream links none of the cloud SDKs.
package main

import (
	"context"
	"fmt"
	"log/slog"
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
	if len(args) > 0 && args[0] == "applier" {
		ours, theirs := externaldns.SplitArgs(args[1:])
		return stage.MainArgs(externaldns.ApplierStage(theirs), ours)
	}
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
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
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
