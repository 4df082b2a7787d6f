package dedup

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires dedup into a process: its flags, the heartbeat of its
// completeness mark (shared with the collector), and its constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        stage.Heartbeat,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.Heartbeat = shared.Heartbeat
			return New(cfg, logger)
		},
	}
}
