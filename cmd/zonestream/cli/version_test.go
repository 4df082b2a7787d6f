package cli

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// --version prints the version and exits 0, in the all-in-one and in each
// stage alone, after ExternalDNS flags each of them takes.
func TestVersionFlag(t *testing.T) {
	args := []string{"--events", "--min-event-sync-interval", "5s", "--no-events", "--aws-zone-type=public", "--version"}
	runs := map[string]func() error{"zonestream": func() error { return runAll(args) }}
	for _, def := range stages {
		d := def()
		runs["zonestream "+d.Name] = func() error { return stage.MainArgs(d, args) }
	}
	for name, run := range runs {
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
			t.Errorf("%s %q: %q, err %v; want %q", name, args, out, err, stage.Version())
		}
	}
}
