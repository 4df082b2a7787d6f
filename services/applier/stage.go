package applier

import (
	"log/slog"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/applier/crdregistry"
	"github.com/zonestream/zonestream/stage"
)

// Stage wires the applier into a process: its flags (the provider's among
// them), the shared --dry-run and --once, and its constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        SharedFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.Share(shared)
			return New(cfg, logger)
		},
	}
}

// SharedFlags are the groups of shared flags the applier reads.
const SharedFlags = stage.PassFlags | stage.RegistryFlags | stage.OwnershipFlags | stage.KubeFlags

// Share takes in the shared flags the applier reads.
func (c *Config) Share(s *stage.Shared) {
	c.DryRun, c.Once = s.DryRun, s.Once
	c.Owner = s.Ownership
	c.CRD = crdregistry.Config{Enabled: s.Ownership.Registry == registry.RegistryCRD, Namespace: s.CRDRegistryNamespace,
		OwnerID: s.Ownership.OwnerID, Kubeconfig: s.Kubeconfig, Master: s.Master}
}
