package unstructured_test

import (
	"os"
	"testing"

	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// The rule tables run the source inside a real collector, against the
// package's kube-apiserver (with the test CRDs of testdata/) and
// JetStream.
func TestMain(m *testing.M) {
	os.Exit(collectortest.Main(m, "testdata"))
}
