package applier

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the applier into a process: its flags (the provider's among
// them) and its constructor. It reads no shared flag.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		RegisterFlags: cfg.RegisterFlags,
		New: func(_ *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			return New(cfg, logger)
		},
	}
}
