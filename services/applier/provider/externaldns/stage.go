package externaldns

import (
	"context"
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// ApplierStage is the applier driving the ExternalDNS provider that
// externalDNSArgs select: the applier's flags are its own; the
// provider's are ExternalDNS' (SplitArgs cuts one command line into the
// two). The provider's name on the bus is --provider-name, else
// --provider (aws, cloudflare, ...).
func ApplierStage(externalDNSArgs []string) stage.Definition {
	var cfg applier.Config
	return stage.Definition{
		Name:          applier.Service,
		RegisterFlags: cfg.RegisterFlags,
		New: func(_ *stage.Shared, logger *slog.Logger) (stage.Service, error) {
			p, err := New(context.Background(), externalDNSArgs,
				provider.Options{DefaultTTL: cfg.DefaultTTL, Logger: logger})
			if err != nil {
				return nil, err
			}
			name := cfg.Name
			if name == "" {
				name = cfg.Provider
			}
			return applier.NewWithProvider(cfg, name, p, logger)
		},
	}
}

// SplitArgs cuts an applier command line (zonestream-externaldns applier
// ...) into the applier's flags and ExternalDNS'.
func SplitArgs(args []string) (applierArgs, externalDNSArgs []string) {
	fs := flag.NewFlagSet(applier.Service, flag.ContinueOnError)
	var opts stage.Options
	opts.RegisterFlags(fs)
	opts.Election.RegisterFlags(fs)
	ApplierStage(nil).Standalone(fs)
	return split(args, goFlags(fs), externalDNSFlags())
}
