//go:build demo

package main

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

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

// demo shows zonestream working on a machine with no cluster: it starts a
// local kube-apiserver and BIND, runs every stage against them, and walks
// a few Services through create, change and delete, checking each step
// with real DNS queries. It fails if any step does not show in BIND.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	keep := fs.Bool("keep-running", true, "keep everything running after the walk-through, until Ctrl-C")
	zone := fs.String("zone", "zonestream.test", "the DNS zone BIND serves")
	verbose := fs.Bool("verbose", false, "show zonestream's own logs")
	web := fs.String("portal-listen", "127.0.0.1:8080", "address of the portal's page (taken or port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	walkthrough.Say("starting a local kube-apiserver (etcd + kube-apiserver, no nodes)")
	cluster, err := kube.Start(ctx)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	walkthrough.Say("starting BIND on loopback, serving %s with a TSIG key", *zone)
	dnsServer, err := bind.Start(ctx, bind.Options{Zones: []string{*zone}})
	if err != nil {
		return err
	}
	defer dnsServer.Stop()
	legacy := "legacy." + *zone
	if err := walkthrough.Plant(dnsServer, *zone, legacy+". 300 IN A 192.0.2.99"); err != nil {
		return err
	}
	dataDir, err := os.MkdirTemp("", "zonestream-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)

	flags := []string{
		"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--provider=rfc2136", "--rfc2136-host=127.0.0.1", "--rfc2136-port=" + strconv.Itoa(dnsServer.Port),
		"--rfc2136-zone=" + *zone, "--rfc2136-tsig-keyname=" + dnsServer.KeyName,
		"--rfc2136-tsig-secret=" + dnsServer.Secret, "--rfc2136-tsig-secret-alg=" + dnsServer.Algorithm,
		"--rfc2136-tsig-axfr", "--domain-filter=" + *zone, "--txt-owner-id=demo",
		"--policy=sync", "--registry=txt", "--interval=10s",
	}
	webAddr, err := portalAddr(*web)
	if err != nil {
		return err
	}
	local := []string{"--nats-listen=127.0.0.1:0", "--data-dir=" + dataDir, "--metrics-address=127.0.0.1:0",
		"--portal-listen=" + webAddr, "--portal-resolver=" + dnsServer.Addr, "--portal-grace=30s"}
	a := newAllInOne()
	if _, err := a.parse(append(slices.Clone(flags), local...)); err != nil {
		return err
	}
	var logOut io.Writer = io.Discard
	if *verbose {
		logOut = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	natsURL := make(chan string, 1)
	runErr := make(chan error, 1)
	go func() { runErr <- a.run(runCtx, true, logger, func(u string) { natsURL <- u }) }()
	select {
	case u := <-natsURL:
		walkthrough.Say("zonestream is running, embedded JetStream at %s, as:\n\n    zonestream %s\n", u, strings.Join(flags, " \\\n      "))
	case err := <-runErr:
		return err
	}
	if err := waitPortal(ctx, "http://"+webAddr+"/"); err != nil {
		return err
	}
	fmt.Printf("web: http://%s/\n", webAddr)

	w := walkthrough.Walk{Ctx: ctx, Kube: cluster.Client, DNS: dnsServer, Zone: *zone}
	steps := []func() error{
		func() error { return w.Create("web", map[string]string{"hostname": "web." + *zone}, "192.0.2.10") },
		func() error {
			return w.Create("api", map[string]string{"hostname": "api." + *zone, "ttl": "60"}, "192.0.2.20", "2001:db8::20")
		},
		func() error { return w.ChangeIP("web", "192.0.2.11") },
		func() error { return w.Remove("api") },
		func() error { return w.Untouched(legacy, "192.0.2.99") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	walkthrough.Say("all checks passed")
	if *keep {
		walkthrough.Say("still running. Try:\n\n    open http://%s/  (every name, why it exists, live)\n    kubectl --kubeconfig %s get services\n    dig @127.0.0.1 -p %d web.%s A +short\n\nCtrl-C stops everything.",
			webAddr, cluster.Kubeconfig, dnsServer.Port, *zone)
		<-ctx.Done()
	}
	cancelRun()
	if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
