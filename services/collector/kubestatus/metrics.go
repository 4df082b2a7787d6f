package kubestatus

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	writeErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_kube_status_errors_total",
		Help: "Failed writes of object status back to Kubernetes (what = event, condition, lookup); DNS work is not affected.",
	}, []string{"what"})
	conditionWrites = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_kube_conditions_written_total",
		Help: "Updates of a DNSEndpoint's Ready condition written to Kubernetes.",
	})
	eventsDropped = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_kube_events_dropped_total",
		Help: "Events not written because more were due than the rate limit allows.",
	})
	eventsEmitted = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_kube_events_total",
		Help: "Events handed to the Kubernetes event recorder, by reason.",
	}, []string{"reason"})
	readErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_collector_kube_status_read_errors_total",
		Help: "Messages or streams the object status could not read, by stream.",
	}, []string{"stream"})
)
