//go:build demo

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

// demo shows zonestream working on a machine with no cluster: it starts a
// local kube-apiserver and BIND, runs every stage against them, and walks
// a few Services through create, change and delete, checking each step
// with real DNS queries. It fails if any step does not show in BIND.
func demo(args []string) error {
	opts, err := parseDemoFlags(args)
	if err != nil || opts == nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	world, err := startDemoWorld(ctx, opts.zone)
	defer world.stop()
	if err != nil {
		return err
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	webAddr, runErr, err := startDemoZonestream(runCtx, opts, world)
	if err != nil {
		return err
	}
	if err := waitPortal(ctx, "http://"+webAddr+"/"); err != nil {
		return err
	}
	fmt.Printf("web: http://%s/\n", webAddr)

	if err := walkDemo(ctx, world, opts.zone); err != nil {
		return err
	}
	walkthrough.Say("all checks passed")
	if opts.keep {
		walkthrough.Say("still running. Try:\n\n    open http://%s/  (every name, why it exists, live)\n    kubectl --kubeconfig %s get services\n    dig @127.0.0.1 -p %d web.%s A +short\n\nCtrl-C stops everything.",
			webAddr, world.cluster.Kubeconfig, world.dns.Port, opts.zone)
		<-ctx.Done()
	}
	cancelRun()
	if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// demoOptions are the demo's own flags.
type demoOptions struct {
	keep    bool
	zone    string
	verbose bool
	web     string
}

// parseDemoFlags reads the demo's flags; nil options and no error mean
// -help was asked for and answered.
func parseDemoFlags(args []string) (*demoOptions, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	keep := fs.Bool("keep-running", true, "keep everything running after the walk-through, until Ctrl-C")
	zone := fs.String("zone", "zonestream.test", "the DNS zone BIND serves")
	verbose := fs.Bool("verbose", false, "show zonestream's own logs")
	web := fs.String("portal-listen", "127.0.0.1:8080", "address of the portal's page (taken or port 0: any free port)")
	stage.Describe(fs, stage.Help{Usage: "zonestream demo [flags]",
		Summary: "Starts a local kube-apiserver and BIND, runs zonestream against them and walks through sample Services."})
	if err := stage.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, err
	}
	return &demoOptions{keep: *keep, zone: *zone, verbose: *verbose, web: *web}, nil
}

// demoWorld is what the demo runs zonestream against: a local
// kube-apiserver, BIND serving the zone with one record zonestream must
// leave alone (legacy), and a data directory for the embedded JetStream.
type demoWorld struct {
	cluster *kube.Cluster
	dns     *bind.Server
	legacy  string
	dataDir string
}

// startDemoWorld starts the demo's kube-apiserver and BIND. Whatever it
// returns, even with an error, is to be stopped.
func startDemoWorld(ctx context.Context, zone string) (*demoWorld, error) {
	w := &demoWorld{legacy: "legacy." + zone}
	walkthrough.Say("starting a local kube-apiserver (etcd + kube-apiserver, no nodes)")
	cluster, err := kube.Start(ctx)
	if err != nil {
		return w, err
	}
	w.cluster = cluster
	walkthrough.Say("starting BIND on loopback, serving %s with a TSIG key", zone)
	dnsServer, err := bind.Start(ctx, bind.Options{Zones: []string{zone}})
	if err != nil {
		return w, err
	}
	w.dns = dnsServer
	if err := walkthrough.Plant(dnsServer, zone, w.legacy+". 300 IN A 192.0.2.99"); err != nil {
		return w, err
	}
	w.dataDir, err = os.MkdirTemp("", "zonestream-demo-")
	return w, err
}

// stop stops what startDemoWorld started, in the reverse order.
func (w *demoWorld) stop() {
	if w.dataDir != "" {
		os.RemoveAll(w.dataDir)
	}
	if w.dns != nil {
		w.dns.Stop()
	}
	if w.cluster != nil {
		w.cluster.Stop()
	}
}

// startDemoZonestream runs the all-in-one against world until ctx ends,
// with the flags a user would give it (which it prints) and the demo's
// local ones. It returns once the embedded JetStream runs: the portal's
// address, and the channel that gets the run's end.
func startDemoZonestream(ctx context.Context, opts *demoOptions, world *demoWorld) (string, <-chan error, error) {
	flags := []string{
		"--kubeconfig=" + world.cluster.Kubeconfig, "--source=service",
		"--provider=rfc2136", "--rfc2136-host=127.0.0.1", "--rfc2136-port=" + strconv.Itoa(world.dns.Port),
		"--rfc2136-zone=" + opts.zone, "--rfc2136-tsig-keyname=" + world.dns.KeyName,
		"--rfc2136-tsig-secret=" + world.dns.Secret, "--rfc2136-tsig-secret-alg=" + world.dns.Algorithm,
		"--rfc2136-tsig-axfr", "--domain-filter=" + opts.zone, "--txt-owner-id=demo",
		"--policy=sync", "--registry=txt", "--interval=10s",
	}
	webAddr, err := portalAddr(opts.web)
	if err != nil {
		return "", nil, err
	}
	local := []string{"--nats-listen=127.0.0.1:0", "--data-dir=" + world.dataDir, "--metrics-address=127.0.0.1:0",
		"--portal-listen=" + webAddr, "--portal-resolver=" + world.dns.Addr, "--portal-grace=30s"}
	a := NewAllInOne()
	if _, err := a.Parse(append(slices.Clone(flags), local...)); err != nil {
		return "", nil, err
	}
	var logOut io.Writer = io.Discard
	if opts.verbose {
		logOut = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	natsURL := make(chan string, 1)
	runErr := make(chan error, 1)
	go func() { runErr <- a.Run(ctx, true, logger, func(u string) { natsURL <- u }) }()
	select {
	case u := <-natsURL:
		walkthrough.Say("zonestream is running, embedded JetStream at %s, as:\n\n    zonestream %s\n", u, strings.Join(flags, " \\\n      "))
		return webAddr, runErr, nil
	case err := <-runErr:
		return "", nil, err
	}
}

// walkDemo walks a few Services through create, change and delete, each
// step checked in BIND, and checks that the record zonestream does not own
// is still there.
func walkDemo(ctx context.Context, world *demoWorld, zone string) error {
	w := walkthrough.Walk{Ctx: ctx, Kube: world.cluster.Client, DNS: world.dns, Zone: zone}
	steps := []func() error{
		func() error { return w.Create("web", map[string]string{"hostname": "web." + zone}, "192.0.2.10") },
		func() error {
			return w.Create("api", map[string]string{"hostname": "api." + zone, "ttl": "60"}, "192.0.2.20", "2001:db8::20")
		},
		func() error { return w.ChangeIP("web", "192.0.2.11") },
		func() error { return w.Remove("api") },
		func() error { return w.Untouched(world.legacy, "192.0.2.99") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
