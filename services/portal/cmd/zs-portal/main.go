// Command zs-portal runs the portal on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/portal"
)

func main() {
	service.Main(portal.Service, func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg portal.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return portal.New(cfg, l) }
	})
}
