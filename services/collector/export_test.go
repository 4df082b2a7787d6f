package collector

import "github.com/prometheus/client_golang/prometheus"

// Metrics, for the tests of package collector_test.

func PublishErrorsMetric() prometheus.Collector { return publishErrors }

func TooLargeMetric(source string) prometheus.Collector { return tooLarge.WithLabelValues(source) }
func StreamLostMetric() prometheus.Collector            { return streamLost }
func ClaimRefusedMetric() prometheus.Collector          { return claimRefused }
