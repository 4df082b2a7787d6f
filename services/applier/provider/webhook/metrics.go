package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// ExternalDNS' webhook provider metrics (provider/webhook, v0.22): a call
// of each of the webhook's methods, and those that failed (after their
// retries). Gauges named _total, as ExternalDNS has them, so that its
// users' queries read the same type.
var (
	recordsErrors = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_records_errors_total",
		Help: "Errors with Records method"})
	recordsRequests = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_records_requests_total",
		Help: "Requests with Records method"})
	applyChangesErrors = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_applychanges_errors_total",
		Help: "Errors with ApplyChanges method"})
	applyChangesRequests = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_applychanges_requests_total",
		Help: "Requests with ApplyChanges method"})
	adjustEndpointsErrors = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_adjustendpoints_errors_total",
		Help: "Errors with AdjustEndpoints method"})
	adjustEndpointsRequests = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_webhook_provider_adjustendpoints_requests_total",
		Help: "Requests with AdjustEndpoints method"})
)

// counted counts a call in requests, and in errs when it failed.
func counted(requests, errs prometheus.Gauge, err error) error {
	requests.Inc()
	if err != nil {
		errs.Inc()
	}
	return err
}
