// Command zs-collector runs the zonestream collector as its own process:
// Kubernetes objects in, per-object endpoint states out to NATS JetStream.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	stage.Main("collector", func(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
		var cfg collector.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs) // --managed-record-types: the planner's too, not in RegisterFlags
		return func(logger *slog.Logger) (stage.Service, error) {
			return collector.New(cfg, logger)
		}
	})
}
