package applier

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are package-level and registered once, so Run may be called
// several times in one process (tests, the all-in-one binary).
var (
	changesTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_changes_total",
		Help: "RRset changes the applier handled, by action (create, update, delete) and outcome (applied, stale, failed).",
	}, []string{"provider", "action", "outcome"})
	// ExternalDNS' names, read by its users' dashboards and alerts.
	lastSync = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_controller_last_sync_timestamp_seconds",
		Help: "When the provider was last listed in full, or a plan last applied (Unix seconds; ExternalDNS' metric).",
	})
	registryEndpoints = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_registry_endpoints_total",
		Help: "Record sets the provider held at its last full listing (ExternalDNS' metric).",
	})
	// registryRecords is registryEndpoints by record type, as ExternalDNS'
	// vector (v0.18 on).
	registryRecords = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "external_dns_registry_records",
		Help: "Number of registry records partitioned by label name (vector).",
	}, []string{"record_type"})
	listingsDeferred = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_listings_deferred_total",
		Help: "Periodic full listings put off because plans kept coming, or to rest after a long listing (listingdue.go).",
	}, []string{"provider"})
	registryErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "external_dns_registry_errors_total",
		Help: "Failed calls to the provider (ExternalDNS' metric).",
	})
	adjustFailures = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_adjust_failures_total",
		Help: "Adjust requests of the planner the provider failed (adjust.go).",
	}, []string{"provider"})
	resultsTooLarge = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_results_without_observed_total",
		Help: "Results too large to carry their plan's observed states, which were then stored before the result (readback.go).",
	}, []string{"provider"})
	plansTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_plans_total",
		Help: "Plans the applier handled, by result status (applied, partial, stale, failed, expired).",
	}, []string{"provider", "status"})
	applySeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "zonestream_applier_apply_seconds",
		Help:    "Time to apply one plan to the provider.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"provider"})
	providerErrorsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_provider_errors_total",
		Help: "Failed provider calls, by operation (zones, records, apply).",
	}, []string{"provider", "op"})
	providerTimeouts = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_provider_timeouts_total",
		Help: "Provider calls abandoned at --provider-timeout, by operation (zones, records, records_at, apply, adjust).",
	}, []string{"provider", "op"})
	rateLimitWaitSeconds = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_provider_rate_limit_wait_seconds_total",
		Help: "Time provider calls spent waiting for --provider-rate-limit.",
	}, []string{"provider"})
	streamLostTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_stream_lost_total",
		Help: "Times the observed stream lost what the applier published (purged, or lost with its node) and the next listing published everything again.",
	}, []string{"provider"})
	observedPublishErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_applier_observed_publish_errors_total",
		Help: "Failed publishes of observed state, by provider and stage: async (retried synchronously at once) or final (published again by the next listing).",
	}, []string{"provider", "stage"})
	deadLettersTotal = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_applier_dead_letters_total",
		Help: "Plan messages that could not be decoded and were parked on the dead-letter subject.",
	})
	// lastReconcile is ExternalDNS' last attempted sync: a full listing or
	// a plan begun, whether the provider answered or not.
	lastReconcile = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_controller_last_reconcile_timestamp_seconds",
		Help: "Timestamp of last attempted sync with the DNS provider (a full listing or a plan begun; ExternalDNS' metric).",
	})
	// consecutiveSoftErrors is ExternalDNS' count of reconciliations
	// failed in a row: here the provider calls failed in a row, reset by
	// one that succeeds (what makes the applier not ready at maxFailures).
	consecutiveSoftErrors = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_controller_consecutive_soft_errors",
		Help: "Number of consecutive soft errors in reconciliation loop: provider calls failed in a row (ExternalDNS' metric).",
	})
	// noOpRuns is ExternalDNS' count of loops that changed nothing at the
	// provider: full listings completed with no plan applied since the
	// one before.
	noOpRuns = promauto.NewCounter(prometheus.CounterOpts{
		Name: "external_dns_controller_no_op_runs_total",
		Help: "Number of reconcile loops ending up with no changes on the DNS provider side: full listings with no change applied since the previous one (ExternalDNS' metric).",
	})
	readyGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_applier_ready",
		Help: "1 once the applier has published a full listing and its provider is healthy.",
	}, []string{"provider"})
)

// externalDNSMetrics says whether the applier reports ExternalDNS' own
// metrics (external_dns_*: one series per process, no provider label).
// They describe the providers declared by flags, as ExternalDNS' describe
// its one provider, and the alerts on them are the platform's: a team's
// DNSProvider (Config.Scope set) reports only in the zonestream_applier_*
// series under its own provider label, so that it neither overwrites the
// platform's counts, nor keeps its last sync fresh while the platform's
// provider is down, nor pages the platform for its own credentials.
func (a *Applier) externalDNSMetrics() bool { return a.cfg.Scope == nil }

// synced records a complete full listing of zones for ExternalDNS'
// metrics: when, and how many record sets they hold.
func (a *Applier) synced(zones []string) {
	if !a.externalDNSMetrics() {
		a.appliedSinceListing.Store(false)
		return
	}
	n := 0
	byType := map[string]int{}
	for _, z := range zones {
		n += a.zoneRecords[z]
		for typ, k := range a.zoneTypes[z] {
			byType[typ] += k
		}
	}
	registryEndpoints.Set(float64(n))
	registryRecords.Reset() // a type no zone holds any more is gone
	for typ, k := range byType {
		registryRecords.WithLabelValues(typ).Set(float64(k))
	}
	for typ, g := range registryByType {
		g.Set(float64(byType[typ]))
	}
	if !a.appliedSinceListing.Swap(false) {
		noOpRuns.Inc()
	}
	lastSync.SetToCurrentTime()
}

// registryByType are ExternalDNS' gauges up to v0.17, one per type, which
// dashboards made then (the community Grafana dashboard among them) still
// read: the same counts as registryRecords for A and AAAA.
var registryByType = map[string]prometheus.Gauge{
	"A": promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_registry_a_records",
		Help: "Number of Registry A records."}),
	"AAAA": promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_registry_aaaa_records",
		Help: "Number of Registry AAAA records."}),
}

// ForgetProvider drops every series of the provider name: a declared
// provider whose object went (services/applier/dnsprovider) must not go
// on reporting itself ready, nor its counters linger for ever.
func ForgetProvider(name string) {
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{changesTotal, listingsDeferred, adjustFailures, resultsTooLarge, plansTotal, applySeconds, providerErrorsTotal,
		providerTimeouts, rateLimitWaitSeconds, streamLostTotal, observedPublishErrors, readyGauge} {
		v.DeletePartialMatch(prometheus.Labels{"provider": name})
	}
}
