package dedup

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	publishedTotal = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_desired_published_total", Help: "Desired-state events published."})
	losersTotal = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_losers_total", Help: "Objects that lost records in a published desired state (priority, tie-break, CNAME conflict)."})
	skipped = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_desired_skipped_total", Help: "Recomputed names whose content hash was unchanged."})
	publishErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_publish_errors_total", Help: "Failed publishes of desired state (retried)."})
	deadLetters = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_dead_letters_total", Help: "Undecodable source events parked on the dead-letter subject."})
	namesGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_names", Help: "DNS names currently wanted."})
	caughtUpGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_caught_up", Help: "1 once the sources stream has been replayed."})
)
