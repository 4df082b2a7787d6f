package applier_test

import (
	"context"
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestRejectedTSIGKeyLeaksNoSecret: an applier given a TSIG secret BIND
// does not know (through --rfc2136-tsig-secret, as a Deployment would)
// cannot list its zone; the rejection is logged, and the secret reaches
// neither the log nor the bus. Neither BIND nor the rfc2136 provider
// echoes a secret today: this guards the path against an error that
// would print one (the key's tsig struct formatted with %v, say), which
// the secret registry masks.
func TestRejectedTSIGKeyLeaksNoSecret(t *testing.T) {
	const wrongSecret = "d3JvbmctdHNpZy1zZWNyZXQtb2YtMzItYnl0ZXMhISE=" // base64, not BIND's
	b := bind.StartT(t, zone)
	js := bus(t)
	var cfg applier.Config
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := stage.Parse(fs, []string{"--provider=rfc2136", "--rfc2136-host=" + b.Host, "--rfc2136-port=" + strconv.Itoa(b.Port),
		"--rfc2136-zone=" + zone, "--rfc2136-tsig-keyname=" + b.KeyName, "--rfc2136-tsig-secret=" + wrongSecret,
		"--rfc2136-tsig-secret-alg=" + b.Algorithm, "--rfc2136-tsig-axfr"}); err != nil {
		t.Fatal(err)
	}
	log, logged := capturedLogger()
	a, err := applier.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, js) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the rejected listing logged", func() bool { return strings.Contains(logged.String(), "listing a zone failed") })
	if a.Ready() == nil {
		t.Error("ready with a key BIND rejects")
	}
	assertNoSecret(t, "the bus", busText(t, js), wrongSecret, b.Secret)
	assertNoSecret(t, "the log", logged.String(), wrongSecret, b.Secret)
}
