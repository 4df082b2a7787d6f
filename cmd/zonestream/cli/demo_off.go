//go:build !demo

package cli

import "errors"

// demo is not in the binary users run: it brings a local kube-apiserver and
// BIND from the test harness, which production has no use for.
func demo([]string) error {
	return errors.New("this binary is built without the demo: run ./hack/demo.sh (go run -tags demo ./cmd/zonestream demo)")
}
