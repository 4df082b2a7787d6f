package cli

import (
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/zonestream/zonestream/stage"
)

// healthcheck asks a running process' ops endpoint whether it is ready and
// fails unless it answers 200. Images hold nothing but the binary (no
// shell, no curl), so a container's HEALTHCHECK runs this:
//
//	zonestream healthcheck [--url http://127.0.0.1:7979/readyz]
func healthcheck(args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:7979/readyz", "the endpoint to ask (a stage's /readyz or /healthz)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	stage.Describe(fs, stage.Help{Usage: "zonestream healthcheck [--url URL] [--timeout D]",
		Summary: "Exits 0 if a process' /readyz answers 200, 1 otherwise: a container's HEALTHCHECK (the image has no shell, no curl)."})
	if err := stage.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return stage.Usagef(fs, "takes no arguments, only --url and --timeout")
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(*url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", *url, resp.Status)
	}
	return nil
}
