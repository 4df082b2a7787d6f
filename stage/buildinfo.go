package stage

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// external_dns_build_info is ExternalDNS' constant 1 labelled with the
// version and revision of the binary and the Go version, OS and
// architecture it was built with: dashboards show it, and alerts join on
// it to tell which version misbehaves. Every stage serves it, as every
// stage serves /metrics from this package.
func init() {
	prometheus.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "external_dns_build_info",
		Help: "A metric with a constant '1' value labeled with 'version' and 'revision' of external_dns and the 'go_version', 'os' and the 'arch' used the build.",
		ConstLabels: prometheus.Labels{
			"version":    Version(),
			"revision":   revision(),
			"go_version": runtime.Version(),
			"os":         runtime.GOOS,
			"arch":       runtime.GOARCH,
		},
	}, func() float64 { return 1 }))
}

// revision is the VCS revision the binary was built from, "unknown"
// without one.
func revision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
