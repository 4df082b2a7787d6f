package webhook

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zonestream/zonestream/stage"
)

// ExternalDNS' webhook provider metrics (provider/webhook, v0.22): a call
// of each of the webhook's methods, and those that failed (after their
// retries). Gauges named _total, as ExternalDNS has them, so that its
// users' queries read the same type.
var (
	recordsErrors = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_records_errors_total",
		Help: "Errors with Records method"})
	recordsRequests = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_records_requests_total",
		Help: "Requests with Records method"})
	applyChangesErrors = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_applychanges_errors_total",
		Help: "Errors with ApplyChanges method"})
	applyChangesRequests = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_applychanges_requests_total",
		Help: "Requests with ApplyChanges method"})
	adjustEndpointsErrors = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_adjustendpoints_errors_total",
		Help: "Errors with AdjustEndpoints method"})
	adjustEndpointsRequests = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_adjustendpoints_requests_total",
		Help: "Requests with AdjustEndpoints method"})
)

// registerMetrics registers the gauges when a webhook provider is first
// made, not at start: ExternalDNS' own webhook package, which the
// externaldns build links, registers the same names at its start
// (stage.Adopted).
var registerMetrics = sync.OnceFunc(func() {
	for _, g := range []*prometheus.Gauge{&recordsErrors, &recordsRequests, &applyChangesErrors,
		&applyChangesRequests, &adjustEndpointsErrors, &adjustEndpointsRequests} {
		*g = stage.Adopted(*g)
	}
})

// counted counts a call in requests, and in errs when it failed.
func counted(requests, errs prometheus.Gauge, err error) error {
	requests.Inc()
	if err != nil {
		errs.Inc()
	}
	return err
}
