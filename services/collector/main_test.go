package collector_test

import (
	"os"
	"testing"

	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// crdDir holds the CRDs zonestream ships (the DNSEndpoint CRD), installed
// as a user would.
const crdDir = "../../deploy/crds"

func TestMain(m *testing.M) {
	os.Exit(collectortest.Main(m, crdDir))
}
