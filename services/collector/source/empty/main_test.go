package empty_test

import (
	"os"
	"testing"

	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// The tests run the source inside a real collector, against the package's
// kube-apiserver and JetStream.
func TestMain(m *testing.M) {
	os.Exit(collectortest.Main(m))
}
