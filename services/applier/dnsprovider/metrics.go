package dnsprovider

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	providersGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_dnsproviders",
		Help: "Declared providers (DNSProvider and ClusterDNSProvider objects) this applier runs, by readiness (ready=true|false).",
	}, []string{"ready"})
	restartsTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_dnsprovider_restarts_total",
		Help: "Restarts of a declared provider's applier, by provider (namespace/name) and reason (spec, secret, retiring).",
	}, []string{"provider", "reason"})
)
