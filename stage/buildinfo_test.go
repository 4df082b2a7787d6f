package stage

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBuildInfo: every stage's /metrics carries ExternalDNS'
// external_dns_build_info, 1, labelled with the version and Go's.
func TestBuildInfo(t *testing.T) {
	want := `# HELP external_dns_build_info A metric with a constant '1' value labeled with 'version' and 'revision' of external_dns and the 'go_version', 'os' and the 'arch' used the build.
# TYPE external_dns_build_info gauge
external_dns_build_info{arch="` + runtime.GOARCH + `",go_version="` + runtime.Version() + `",os="` + runtime.GOOS + `",revision="` + revision() + `",version="` + Version() + `"} 1
`
	if err := testutil.GatherAndCompare(prometheus.DefaultGatherer, strings.NewReader(want), "external_dns_build_info"); err != nil {
		t.Error(err)
	}
}
