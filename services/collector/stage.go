package collector

import (
	"log/slog"

	"k8s.io/klog/v2"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the collector into a process: its flags, the shared ones it
// reads (record types for NodePort SRV, the heartbeat of its marks, the
// TXT registry to tell names another owner holds), and its constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Name,
		Shared:        stage.RecordTypes | stage.Heartbeat | stage.OwnershipFlags | stage.RegistryFlags | stage.KubeFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Runner, error) {
			cfg.ManagedRecordTypes, cfg.Heartbeat = shared.ManagedRecordTypes, shared.Heartbeat
			cfg.Ownership = shared.Ownership
			cfg.Kubeconfig, cfg.Master = shared.Kubeconfig, shared.Master
			cfg.PrivateBus = shared.PrivateBus
			// client-go logs through klog (watch errors, throttling): in
			// the process' one format, not klog's own text lines.
			klog.SetSlogLogger(logger.With("component", "client-go"))
			return NewForNamespaces(cfg, logger)
		},
	}
}
