package stage

import (
	"log/slog"

	"github.com/zonestream/zonestream/stage/gcpace"
)

// PaceGC has a long-running process collect garbage when its heap grows,
// not also every two minutes at rest (package gcpace), unless GOGC or
// GOMEMLIMIT say how; stop undoes it.
func PaceGC(logger *slog.Logger) (stop func()) {
	stop, started := gcpace.Start()
	if started {
		logger.Info("garbage is collected as the heap grows, not every two minutes at rest; GOGC or GOMEMLIMIT set otherwise")
	}
	return stop
}
