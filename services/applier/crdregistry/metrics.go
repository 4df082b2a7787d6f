package crdregistry

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	unreadable = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_crd_registry_unreadable_total",
		Help: "DNSRecords of ours that could not be read, skipped: the record they speak for counts as no one's.",
	})
	statusErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_crd_registry_status_errors_total",
		Help: "DNSRecord status writes that failed (the record then does not count as owned until written again).",
	})
	refused = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_crd_registry_refused_total",
		Help: "Ownership changes of a plan the CRD registry refused (no record to speak for, or another owner's DNSRecord).",
	})
)
