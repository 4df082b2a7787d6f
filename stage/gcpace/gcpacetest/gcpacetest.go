// Package gcpacetest sets up tests of paced collection.
package gcpacetest

import (
	"os"
	"testing"
)

// Unconfigured removes GOGC and GOMEMLIMIT from the environment for the
// test, as on a process nobody tuned, so that gcpace.Start paces; the
// test's cleanup puts them back.
func Unconfigured(t testing.TB) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if old, ok := os.LookupEnv(name); ok {
			os.Unsetenv(name)
			t.Cleanup(func() { os.Setenv(name, old) })
		}
	}
}
