package collector

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the collector into a process: its flags, the shared ones it
// reads (record types for NodePort SRV, the heartbeat of its marks, the
// TXT registry to tell names another owner holds), and its constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        stage.RecordTypes | stage.Heartbeat | stage.OwnershipFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.ManagedRecordTypes, cfg.Heartbeat = shared.ManagedRecordTypes, shared.Heartbeat
			cfg.Ownership = shared.Ownership
			cfg.PrivateBus = shared.PrivateBus
			return New(cfg, logger)
		},
	}
}
