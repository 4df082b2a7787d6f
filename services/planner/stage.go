package planner

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the planner into a process: its flags, the shared ones it
// owns with others (record types, TXT registry, domain filter), and its
// constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        stage.RecordTypes | stage.OwnershipFlags | stage.DomainFlags | stage.PassFlags | stage.RegistryFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.ManagedRecordTypes = shared.ManagedRecordTypes
			cfg.Ownership, cfg.Domains, cfg.Registry = shared.Ownership, shared.Domains, shared.Ownership.Registry
			cfg.DryRun, cfg.Once, cfg.OnceTimeout = shared.DryRun, shared.Once, shared.OnceTimeout
			return New(cfg, logger)
		},
	}
}
