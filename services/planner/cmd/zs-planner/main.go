// Command zs-planner runs the planner stage on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/planner"
)

func main() {
	service.Main("planner", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg planner.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return planner.New(cfg, l) }
	})
}
