// Command zs-dedup runs the dedup stage on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/dedup"
)

func main() {
	service.Main("dedup", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg dedup.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs) // --heartbeat-interval: the collector's too
		return func(l *slog.Logger) (service.Service, error) { return dedup.New(cfg, l) }
	})
}
