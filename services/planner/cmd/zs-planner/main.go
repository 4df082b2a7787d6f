// Command zs-planner runs the planner stage on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/planner"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	stage.Main("planner", func(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
		var cfg planner.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs)
		return func(l *slog.Logger) (stage.Service, error) { return planner.New(cfg, l) }
	})
}
