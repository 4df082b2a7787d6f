package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// --version prints the version and exits 0, in the all-in-one and a stage
// alone.
func TestVersionFlag(t *testing.T) {
	for name, run := range map[string]func() error{
		"zonestream": func() error { return runAll([]string{"--version"}) },
		"zonestream applier": func() error {
			d, _ := findStage("applier")
			return stage.MainArgs(d, []string{"--version"})
		},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout = w
		err = run()
		os.Stdout = stdout
		w.Close()
		out, _ := io.ReadAll(r)
		if err != nil || strings.TrimSpace(string(out)) != stage.Version() || stage.Version() == "" {
			t.Errorf("%s --version: %q, err %v; want %q", name, out, err, stage.Version())
		}
	}
}
