package webhook

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
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
// made, not at start: a build that links ExternalDNS' own webhook package
// (-tags externaldns) has it register the same names at its start, and
// two registrations of one name end the process. Where a gauge of that
// name is registered already, it is the one counted.
var registerMetrics = sync.OnceFunc(func() {
	for _, g := range []*prometheus.Gauge{&recordsErrors, &recordsRequests, &applyChangesErrors,
		&applyChangesRequests, &adjustEndpointsErrors, &adjustEndpointsRequests} {
		err := prometheus.Register(*g)
		var registered prometheus.AlreadyRegisteredError
		if errors.As(err, &registered) {
			if existing, ok := registered.ExistingCollector.(prometheus.Gauge); ok {
				*g = existing
			}
		}
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
