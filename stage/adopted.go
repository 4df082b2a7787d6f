package stage

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Adopted registers c with Prometheus' default registry and returns it;
// where a collector of the same description is registered already, it
// returns that one instead. A metric of ExternalDNS' that its own packages
// register at their start (a build with -tags externaldns links them) is
// then served once, counted by zonestream; registered at zonestream's start
// too, the second registration would end the process. So such a metric is
// made unregistered and adopted when its stage is built, after every
// package's start.
func Adopted[C prometheus.Collector](c C) C {
	err := prometheus.Register(c)
	var registered prometheus.AlreadyRegisteredError
	if errors.As(err, &registered) {
		if existing, ok := registered.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}
