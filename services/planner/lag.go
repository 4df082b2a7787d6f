package planner

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The planner's lag: what it has read and not taken in yet, and what
// changed and is not planned yet. zonestream_planner_caught_up says only
// whether the replay is done; these say how far behind it is after.
var (
	inboxMessages = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_inbox_messages",
		Help: "Events read from the bus that the planner has not taken in yet (at most 1024); full for long means it falls behind.",
	})
	dirtyNames = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_dirty_names",
		Help: "Names that changed and are not planned yet: waiting for the next pass, their zone's plans in flight, an adjustment or a back-off.",
	})
)

// reportLag sets the lag gauges.
func reportLag(inbox, dirty int) {
	inboxMessages.Set(float64(inbox))
	dirtyNames.Set(float64(dirty))
}
