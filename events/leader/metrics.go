package leader

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	leadingGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_leader",
		Help: "1 while this replica holds the lease of its stage instance and works; 0 while it stands by.",
	}, []string{"lease"})
	transitionsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_leader_transitions_total",
		Help: "Times this replica became leader (acquired) or stopped being one (lost, released), by lease.",
	}, []string{"lease", "transition"})
	workFailuresTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_leader_work_failures_total",
		Help: "Times the work of this replica's stage failed while it led (the lease is then given up and campaigned for again), by lease.",
	}, []string{"lease"})
)
