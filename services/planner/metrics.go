package planner

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	adjustFailures = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_adjust_failures_total",
		Help: "Adjust requests to a provider's applier that failed (adjust.go): its names wait.",
	}, []string{"provider"})
	plansPublished = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_plans_published_total", Help: "Plans queued for appliers."}, []string{"provider"})
	changesPlanned = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_changes_planned_total", Help: "RRset changes planned."}, []string{"provider", "action"})
	results = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_results_total", Help: "Results of this planner's plans, by status."}, []string{"provider", "status"})
	conflicts = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_planner_conflicts_total", Help: "Wanted records left alone because another owner holds the name."})
	unconverged = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_planner_unconverged_total",
		Help: "Applied plans followed by the same plan: the provider does not hold what it was given (backing off)."})
	plansWithdrawn = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_plans_withdrawn_total",
		Help: "Superseded plans (no result within --plan-timeout) deleted from the queue before the zone was planned again."}, []string{"provider"})
	publishErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_planner_publish_errors_total", Help: "Plans that could not be published (re-planned)."})
	deadLetters = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_planner_dead_letters_total", Help: "Undecodable events parked on the dead-letter subject."})
	planSeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Name: "zonestream_planner_plan_seconds", Help: "Time to plan one batch of dirty names.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)})
	deletesAllowed = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_deletes_allowed",
		Help: "1 while the planner holds a live mark from dedup that the desired state is complete: deletes allowed."})
	refusedMarks = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_planner_complete_marks_refused_total",
		Help: "Complete marks refused because they drop a collector an earlier one named, without its retirement: deletes held."})
	refused = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_refused_total",
		Help: "Wanted records refused before anything was written, by reason (name-too-long, plan-too-large)."}, []string{"reason"})
	unknownNamesGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_unknown_names",
		Help: "Names whose last desired or observed message could not be read: planned for nobody until a readable one comes."})
	heldPlans = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_held_plans",
		Help: "Zones whose deletes the mass-delete guard holds (--max-deletes, --max-deletes-percent) until approved."})
	holds = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_holds_total",
		Help: "Deletes held by the mass-delete guard: each new hold of a zone."}, []string{"provider"})
	approvals = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_approvals_total",
		Help: "Operators' approvals of held deletes: accepted, or ignored (not the zone's hold now)."}, []string{"outcome"})
	caughtUpGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_caught_up", Help: "1 once the desired and observed streams have been replayed."})
)

var (
	namesLost = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_planner_adjust_names_lost_total",
		Help: "Names a provider's adjust answer lost (lost.go): not planned, nothing of them deleted, asked again after a back-off."}, []string{"provider"})
	namesWaitingForAdjust = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_planner_names_waiting_for_adjust",
		Help: "Names waiting because a provider's adjust answer lost them (lost.go)."})
)

// Where names go once providers are declared by DNSProvider objects
// (routes.go, quota.go).
var (
	namesRouted = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_planner_names_routed",
		Help: "Desired names routed to each provider (events/routing): planned into it."}, []string{"provider"})
	namesRefused = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_planner_names_refused",
		Help: "Desired names routed to no provider, by reason (NoZone, NamespaceNotAllowed, ProviderTie): planned nowhere, nothing of them deleted."}, []string{"reason"})
	namesOverQuota = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_planner_names_over_quota",
		Help: "New names not planned into a declared provider because it holds its quota of names (quota.go)."}, []string{"provider"})
)
