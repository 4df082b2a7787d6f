// Command zs-collector runs the zonestream collector as its own process:
// Kubernetes objects in, per-object endpoint states out to NATS JetStream.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/collector"
)

func main() {
	service.Main("collector", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg collector.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs) // --managed-record-types: the planner's too, not in RegisterFlags
		return func(logger *slog.Logger) (service.Service, error) {
			return collector.New(cfg, logger)
		}
	})
}
