package portal

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage"
)

// Stage wires the portal into a process: its flags, the planner's owner
// id and domain filter (to tell names zonestream leaves alone), and its
// constructor.
func Stage() stage.Definition {
	var cfg Config
	return stage.Definition{
		Name:          Service,
		Shared:        stage.OwnershipFlags | stage.DomainFlags,
		RegisterFlags: cfg.RegisterFlags,
		New: func(shared *stage.Shared, logger *slog.Logger) (stage.Service, error) {
			d := shared.Domains
			cfg.OwnerID = shared.Ownership.OwnerID
			cfg.Filters = Filters{Include: d.Include, Exclude: d.Exclude, Regex: d.Regex, RegexExclusion: d.RegexExclusion}
			return New(cfg, logger)
		},
	}
}
