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
	deadLetters = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_dedup_dead_letters_total", Help: "Source events rejected and parked on the dead-letter subject, by reason (undecodable, wrong_subject)."},
		[]string{"reason"})
	tooLarge = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_too_large_total", Help: "Desired states too large for the bus; the name keeps its last published state."})
	heldNames = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_held_total", Help: "Names kept as published because an object that owned a record there is unknown (its last message was rejected)."})
	awaitedGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_awaiting_collector_names", Help: "Names kept as published because an object that held a record there is gone from the sources stream while a collector watching it has not said synced since dedup started."})
	unreadableMarks = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_unreadable_marks_total", Help: "Completeness marks read back at start that could not be decoded; the collectors they named are not required again."})
	streamLost = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_dedup_stream_lost_total", Help: "Times the desired stream lost what dedup published (purged, or lost with its node) and everything was published again."})
	completeGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_complete", Help: "1 while every collector is live and synced: the desired state is complete and the planner may delete."})
	namesGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_names", Help: "DNS names currently wanted."})
	caughtUpGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_caught_up", Help: "1 once the sources stream has been replayed."})
)
