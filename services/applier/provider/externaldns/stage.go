package externaldns

import (
	"context"
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"
)

// ApplierStage is the applier whose --provider names one of zonestream's
// own providers or any provider of ExternalDNS (aws, google, azure,
// cloudflare, ...). The command line is shared: ExternalDNS' Config
// parses the flags it knows (TakeArgs), the applier the flags it knows,
// and a flag both know (--provider, --domain-filter, --txt-owner-id, ...)
// goes to both. zonestream's own provider wins a name both have
// (rfc2136, pdns, coredns, webhook). The provider's name on the bus is
// --provider-name, else --provider.
func ApplierStage() stage.Definition {
	var (
		cfg         applier.Config
		externalDNS []string
	)
	def := stage.Definition{Name: applier.Name, Shared: applier.SharedFlags, RegisterFlags: cfg.RegisterFlags}
	def.TakeArgs = func(fs *flag.FlagSet, args []string) []string {
		var ours []string
		ours, externalDNS = split(args, goFlags(fs), externalDNSFlags())
		return ours
	}
	def.Taken = takenFlags
	def.New = func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
		cfg.Share(shared)
		if applier.NativeProvider(cfg.Provider) {
			return applier.New(cfg, logger)
		}
		p, err := New(context.Background(), externalDNS,
			provider.Options{DefaultTTL: cfg.DefaultTTL, Logger: logger.With("provider", cfg.Provider)})
		if err != nil {
			return nil, err
		}
		name := cfg.Name
		if name == "" {
			name = cfg.Provider
		}
		return applier.NewWithProvider(cfg, name, p, logger)
	}
	return def
}

// takenFlags are the flags of ExternalDNS' command line, which its own
// parser reads: the help lists the providers' flags as read, and a
// misspelled flag may be one of them.
func takenFlags() []stage.TakenFlag {
	var out []stage.TakenFlag
	for _, f := range edns.App(edns.NewConfig()).Model().Flags {
		out = append(out, stage.TakenFlag{Name: f.Name, Usage: f.Help, Boolean: f.IsBoolFlag()})
	}
	return out
}
