package systemtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestNATSCLIReadsTheBus runs the real NATS CLI against a running
// pipeline, as README's "Reading the bus" tells users to: `nats stream ls`
// lists zonestream's streams, and `nats sub` with `--translate 'zonestream
// decode'` prints each name's desired state as readable JSON.
func TestNATSCLIReadsTheBus(t *testing.T) {
	natsCLI := goTool(t, "ZS_NATS_CLI", "nats")
	const zone = "example.org"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	url := natsenv.StartT(t).ClientURL()
	startPipeline(t, url, cluster, ns, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const services = 3
	if err := createServices(ctx, cluster.Client, zone, 0, services); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // DNS name -> its address
	for i := range services {
		want["svc-"+strconv.Itoa(i)+"."+zone] = burstIP(i)
	}
	waitUntil(t, "BIND answers every Service", 60*time.Second, func() error {
		for name, ip := range want {
			if got := answersOf(ns, name, dns.TypeA); len(got) != 1 || got[0] != ip {
				return fmt.Errorf("%s answers %v, want %s", name, got, ip)
			}
		}
		return nil
	})

	streams := command(t, natsCLI, "--server", url, "stream", "ls", "--names")
	for _, s := range []string{events.StreamSources, events.StreamDesired, events.StreamPlans, events.StreamObserved, events.StreamResults} {
		if !strings.Contains(streams, s) {
			t.Errorf("nats stream ls does not list %s:\n%s", s, streams)
		}
	}

	// `zonestream decode` as the user has it: the binary on PATH.
	t.Setenv("PATH", filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	sub := exec.CommandContext(ctx, natsCLI, "--server", url, "sub", "zs.desired.>", "--last-per-subject",
		"--stream", events.StreamDesired, "--translate", "zonestream decode")
	out, err := sub.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sub.Stderr = sub.Stdout
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Process.Kill(); _ = sub.Wait() }()
	seen, printed := map[string]bool{}, []string{}
	lines := bufio.NewScanner(out)
	for len(seen) < len(want) && lines.Scan() {
		line := lines.Text()
		printed = append(printed, line)
		if !strings.HasPrefix(line, "{") {
			continue // the CLI's own header lines
		}
		var d struct {
			DNSName   string `json:"dnsName"`
			Endpoints []struct {
				RecordType string   `json:"recordType"`
				Targets    []string `json:"targets"`
			} `json:"endpoints"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Errorf("nats sub --translate printed a line that is not JSON: %q: %v", line, err)
			continue
		}
		ip, ok := want[d.DNSName]
		if !ok {
			continue // the completeness marks and other names
		}
		if len(d.Endpoints) != 1 || d.Endpoints[0].RecordType != "A" || len(d.Endpoints[0].Targets) != 1 || d.Endpoints[0].Targets[0] != ip {
			t.Errorf("desired state of %s reads %s, want one A %s", d.DNSName, line, ip)
		}
		seen[d.DNSName] = true
	}
	if len(seen) < len(want) {
		t.Fatalf("nats sub showed %d of the %d names before it stopped (%v); it printed:\n%s",
			len(seen), len(want), ctx.Err(), strings.Join(printed, "\n"))
	}
}
