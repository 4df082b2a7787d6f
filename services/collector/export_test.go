package collector

import "github.com/prometheus/client_golang/prometheus"

// Metrics, for the tests of package collector_test.

func PublishSkippedMetric() prometheus.Collector { return publishSkipped.WithLabelValues("service") }

func InvalidInputMetric(reason string) prometheus.Collector {
	return invalidInput.WithLabelValues("service", reason)
}

func PublishErrorsMetric() prometheus.Collector { return publishErrors }

func InvalidInputMetricOf(source, reason string) prometheus.Collector {
	return invalidInput.WithLabelValues(source, reason)
}

func PublishSkippedMetricOf(source string) prometheus.Collector {
	return publishSkipped.WithLabelValues(source)
}

func TooLargeMetric(source string) prometheus.Collector { return tooLarge.WithLabelValues(source) }
func StreamLostMetric() prometheus.Collector            { return streamLost }
func ClaimRefusedMetric() prometheus.Collector          { return claimRefused }
