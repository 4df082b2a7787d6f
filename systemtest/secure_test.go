package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// tsigFromFile replaces the TSIG secret on a provider command line by a
// file holding it: how the manifests pass it.
func tsigFromFile(t *testing.T, flags []string) []string {
	t.Helper()
	out := slices.Clone(flags)
	for i, f := range out {
		if secret, ok := strings.CutPrefix(f, "--rfc2136-tsig-secret="); ok {
			file := filepath.Join(t.TempDir(), "tsig-secret")
			if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out[i] = "--rfc2136-tsig-secret-file=" + file
		}
	}
	return out
}

// noViolations fails the test if a stage's log reports a refusal: the
// generated permissions must cover everything the pipeline does.
func noViolations(t *testing.T, procs ...*process) {
	t.Helper()
	for _, p := range procs {
		p.kill() // its log is complete and no longer written
		if bytes.Contains(p.log.Bytes(), []byte("permissions violation")) {
			t.Errorf("%s was refused something it needs:\n%s", p.name, lastBytes(p.log.Bytes(), 4096))
		}
	}
}

// TestForgedPlanIsNeverApplied runs a real applier under its own
// generated credentials against BIND, and has cluster a's collector
// credentials publish a plan: it is refused and nothing reaches DNS,
// while the same plan published with the planner's credentials is
// applied (the applier was listening).
func TestForgedPlanIsNeverApplied(t *testing.T) {
	const zone = "secure.test"
	ns := bind.StartT(t, zone)
	b := startSecuredBus(t, []string{"a"}, []string{"rfc2136"})
	metrics := loopback.Addr(t)
	args := append([]string{"applier", "--nats-url=" + b.url, "--metrics-address=" + metrics, "--interval=2s"},
		b.flags(events.ApplierPermissions("rfc2136"))...)
	for _, f := range tsigFromFile(t, rfc2136Flags(ns, zone, "secure")) {
		if strings.HasPrefix(f, "--provider") || strings.HasPrefix(f, "--rfc2136") {
			args = append(args, f)
		}
	}
	applier := startProcess(t, "applier", args...)
	waitUntil(t, "the applier ready", time.Minute, func() error { return ready(metrics) })

	plan := func(name, ip string) *events.Plan {
		return &events.Plan{ID: "plan-" + name, Provider: "rfc2136", Zone: zone, Changes: []events.Change{{
			New: &events.Endpoint{DNSName: name + "." + zone, RecordType: "A", Targets: []string{ip}, RecordTTL: 300},
		}}}
	}
	ctx := context.Background()
	subject := events.PlanSubject("rfc2136", zone)
	a, log := b.connectAs(t, events.CollectorPermissions("a"))
	err := refused(t, log, "publish", subject, func() error {
		_, _, err := events.Publish(ctx, a, subject, plan("forged", "192.0.2.66"), "")
		return err
	})
	if !errors.Is(err, events.ErrPermissionDenied) {
		t.Fatalf("forging a plan fails with %v, want a permission error", err)
	}

	planner, _ := b.connectAs(t, events.PlannerPermissions())
	if _, _, err := events.Publish(ctx, planner, subject, plan("control", "192.0.2.77"), ""); err != nil {
		t.Fatalf("the planner cannot publish a plan: %v", err)
	}
	waitUntil(t, "the planner's plan applied", time.Minute, func() error {
		if got := answersOf(ns, "control."+zone, dns.TypeA); !slices.Equal(got, []string{"192.0.2.77"}) {
			return errors.New(strings.Join(got, ","))
		}
		return nil
	})
	for _, rr := range zoneContents(t, ns, zone) {
		if strings.HasPrefix(rr, "forged ") {
			t.Fatalf("the forged plan reached DNS: %s", rr)
		}
	}
	noViolations(t, applier)
}

// TestPipelineWithGeneratedCredentials runs the four stages as separate
// processes, each with its own generated credentials and nothing more,
// against a nats-server run from the generated configuration, speaking
// TLS only and requiring client certificates: a Service becomes a record,
// changes and goes, and no stage is refused anything. Then again with
// collectors that read nothing but their own objects
// (nats-config --collector-status=false).
func TestPipelineWithGeneratedCredentials(t *testing.T) {
	t.Run("collector-status", func(t *testing.T) {
		pipelineWithGeneratedCredentials(t, events.CollectorPermissions("secure"))
	})
	t.Run("no-collector-status", func(t *testing.T) {
		pipelineWithGeneratedCredentials(t, events.CollectorPermissionsWithoutStatus("secure"), "--collector-status=false")
	})
}

func pipelineWithGeneratedCredentials(t *testing.T, collector events.Permissions, natsConfigArgs ...string) {
	const zone = "secure.test"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	b := startSecuredBusTLS(t, []string{"secure"}, []string{"rfc2136"}, natsConfigArgs...)
	portalAddr := loopback.Addr(t)
	p := startStagesWith(t, b.url, cluster, "secure", tsigFromFile(t, rfc2136Flags(ns, zone, "secure")), map[string][]string{
		"collector": append(b.flags(collector), collector.StageFlags...),
		"dedup":     b.flags(events.DedupPermissions()),
		"planner":   b.flags(events.PlannerPermissions()),
		"applier":   b.flags(events.ApplierPermissions("rfc2136")),
		"portal":    append(b.flags(events.PortalPermissions()), "--portal-listen="+portalAddr, "--txt-owner-id=secure"),
	}, "--interval=5s")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := walkthrough.Walk{Ctx: ctx, Kube: cluster.Client, DNS: ns, Zone: zone}
	if err := w.Create("web", map[string]string{"hostname": "web." + zone}, "192.0.2.10"); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := w.ChangeIP("web", "192.0.2.11"); err != nil {
		t.Fatalf("change: %v", err)
	}
	// The portal, with only its read permissions, sees it all.
	waitUntil(t, "the portal to show web in sync with its history", 30*time.Second, func() error {
		return portalShows(portalAddr, "web."+zone, "in sync", "A 192.0.2.11")
	})
	if err := w.Remove("web"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	noViolations(t, p.stages...)
}

// portalShows asks the portal at addr for name: nil once it has the status
// and records given, and a history.
func portalShows(addr, name, status, records string) error {
	resp, err := http.Get("http://" + addr + "/api/names/" + name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var d struct {
		Status  string
		Desired *struct{ Endpoints []events.Endpoint }
		History []json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		return err
	}
	got := ""
	if d.Desired != nil && len(d.Desired.Endpoints) > 0 {
		ep := d.Desired.Endpoints[0]
		got = ep.RecordType + " " + strings.Join(ep.Targets, " ")
	}
	if d.Status != status || got != records || len(d.History) == 0 {
		return fmt.Errorf("%s: %s, %q, %d history entries", name, d.Status, got, len(d.History))
	}
	return nil
}
