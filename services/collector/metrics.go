package collector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Package-level metrics, so that a process may construct and Run collectors
// repeatedly (tests, the all-in-one binary).
var (
	// ExternalDNS' names, read by its users' dashboards and alerts.
	sourceEndpoints = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_source_endpoints_total",
		Help: "Endpoints the collector's objects want now (ExternalDNS' metric).",
	})
	// sourceRecords is sourceEndpoints by record type, as ExternalDNS'
	// vector (v0.18 on).
	sourceRecords = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "external_dns_source_records",
		Help: "Number of source records partitioned by label name (vector).",
	}, []string{"record_type"})
	sourceErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "external_dns_source_errors_total",
		Help: "Failed reads of the Kubernetes API (lists, watches), and objects whose endpoints could not be read or had bad input (ExternalDNS' metric).",
	})
	objectsPublished = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_objects_published_total",
		Help: "Object states published to the sources stream, by source and kind (update or tombstone).",
	}, []string{"source", "kind"})
	publishSkipped = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_publish_skipped_total",
		Help: "Object states not published because their content hash had not changed.",
	}, []string{"source"})
	invalidInput = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_invalid_input_total",
		Help: "Bad inputs (annotations, templates) skipped, by source and reason.",
	}, []string{"source", "reason"})
	stateUnknown = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_state_unknown_total",
		Help: "Objects whose state could not be computed for a transient cause (a resolver failing); their last published state is kept.",
	}, []string{"source"})
	publishErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_publish_errors_total",
		Help: "Failed publishes (and stream read-backs); each is retried with backoff.",
	})
	syncedGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_collector_synced",
		Help: "1 once the informers have synced and the first publish pass is done, else 0.",
	})
)

var (
	claimRefused = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_cluster_name_refused_total",
		Help: "Starts refused because --cluster-name is held by another Kubernetes cluster.",
	})
	tooLarge = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_too_large_total",
		Help: "Objects whose state is too large for one NATS message; their last published state is kept.",
	}, []string{"source"})
	streamLost = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_stream_lost_total",
		Help: "Times the sources stream lost this collector's state (purged, or lost with its node) and everything was published again.",
	})
)

// sourceByType are ExternalDNS' gauges up to v0.17, one per type, which
// dashboards made then (the community Grafana dashboard among them) still
// read: the same counts as sourceRecords for A and AAAA.
var sourceByType = map[string]prometheus.Gauge{
	"A": promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_source_a_records",
		Help: "Number of Source A records."}),
	"AAAA": promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_source_aaaa_records",
		Help: "Number of Source AAAA records."}),
}
