package connector_test

import (
	"os"
	"testing"

	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// The tests run the source inside a real collector (which needs the
// package's kube-apiserver for its cluster identity) publishing to a real
// JetStream, reading a real TCP server the tests start.
func TestMain(m *testing.M) {
	os.Exit(collectortest.Main(m))
}
