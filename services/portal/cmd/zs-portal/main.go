// Command zs-portal runs the portal on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	stage.Main(portal.Service, func(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
		var cfg portal.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (stage.Service, error) { return portal.New(cfg, l) }
	})
}
