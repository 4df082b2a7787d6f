//go:build !demo

package cli

import (
	"errors"
	"flag"

	"github.com/zonestream/zonestream/stage"
)

// demo is not in the binary users run: it brings a local kube-apiserver and
// BIND from the test harness, which production has no use for.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	stage.Describe(fs, stage.Help{Usage: "zonestream demo [--keep-running]",
		Summary: "Not in this binary: the demo brings a local kube-apiserver and BIND from the test harness.\nRun ./hack/demo.sh (go run -tags demo ./cmd/zonestream demo)."})
	if err := stage.ParseFlags(fs, args); errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errors.New("this binary is built without the demo: run ./hack/demo.sh (go run -tags demo ./cmd/zonestream demo)")
}
