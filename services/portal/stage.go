package portal

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the portal into a process: its flags, the planner's ownership
// settings and domain filter (to tell names zonestream leaves alone), and its
// constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        stage.OwnershipFlags | stage.RegistryFlags | stage.DomainFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.Ownership, cfg.Domains = shared.Ownership, shared.Domains
			return New(cfg, logger)
		},
	}
}
