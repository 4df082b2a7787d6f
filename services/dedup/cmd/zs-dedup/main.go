// Command zs-dedup runs the dedup stage on its own against an external NATS.
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	stage.Main("dedup", func(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
		var cfg dedup.Config
		cfg.RegisterFlags(fs)
		cfg.RegisterSharedFlags(fs) // --heartbeat-interval: the collector's too
		return func(l *slog.Logger) (stage.Service, error) { return dedup.New(cfg, l) }
	})
}
