package coredns

import (
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// SetRedialAfter sets how long a connection stays in transient failure
// before the client is replaced, until the returned func restores it.
func SetRedialAfter(d time.Duration) (restore func()) {
	old := redialAfter
	redialAfter = d
	return func() { redialAfter = old }
}

// Redials is how many clients were replaced so far.
func Redials() float64 { return testutil.ToFloat64(redials) }
