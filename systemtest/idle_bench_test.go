package systemtest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// BenchmarkIdle measures the all-in-one at rest (the cost table's idle row): N Services in
// BIND, nothing changing, --interval=1m. It reports the process's own
// CPU-seconds per minute (utime+stime from /proc, not wall time: the
// machine is shared), the mean of two idle minutes, the RSS after them and
// how much of it is the executable's own pages, and writes a CPU profile
// of a third minute, with heap profiles before and after it, to
// $ZS_IDLE_PROFILE_DIR when set (that minute is not a figure: the
// profiler's own signals roughly double it). N is each of
// $ZS_IDLE_SERVICES (default 1000; the table command runs 1000,5000,20000).
func BenchmarkIdle(b *testing.B) {
	for _, n := range idleSizes(b) {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			for range b.N {
				benchIdle(b, n, zonestreamAtRest)
			}
		})
	}
}

// BenchmarkWorkPerChange is the all-in-one's CPU-seconds per 1000 Service
// status changes, from the first change until BIND holds every new
// address, on as many Services at rest ($ZS_WORK_SERVICES, default 1000:
// more gives a profile with more samples).
func BenchmarkWorkPerChange(b *testing.B) {
	n := 1000
	if v := os.Getenv("ZS_WORK_SERVICES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("ZS_WORK_SERVICES: %q is not a number of Services", v)
		}
	}
	b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
		for range b.N {
			benchWork(b, n, zonestreamAtRest)
		}
	})
}

func idleSizes(b *testing.B) []int {
	var sizes []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("ZS_IDLE_SERVICES"), "1000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("ZS_IDLE_SERVICES: %q is not a number of Services", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// idleSettle is how long after convergence the measure starts: past the
// streams' duplicate window (events/streams.go), plus GC and acks.
const idleSettle = 2*time.Minute + 15*time.Second

// atRest starts a DNS controller against cluster and ns, managing zone
// with owner id "bench", and returns its process and, when it serves one,
// its pprof address.
type atRest func(b *testing.B, cluster *kube.Cluster, ns *bind.Server, zone string) (p *process, pprof string)

func zonestreamAtRest(b *testing.B, cluster *kube.Cluster, ns *bind.Server, zone string) (*process, string) {
	ops := loopback.Addr(b)
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--interval=1m",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + b.TempDir(), "--metrics-address=" + ops, "--pprof", "--log-level=warn"},
		rfc2136Flags(ns, zone, "bench")...)
	return startProcess(b, "zonestream", args...), ops
}

// converged starts start with n Services in place and waits until BIND
// holds all of them and the controller has settled.
func converged(b *testing.B, n int, start atRest) (*process, string, *kube.Cluster, *bind.Server, string) {
	const zone = "idle.test"
	cluster := kube.StartT(b)
	ns := bind.StartT(b, zone)
	p, ops := start(b, cluster, ns, zone)
	if err := createServices(context.Background(), cluster.Client, zone, 0, n); err != nil {
		b.Fatal(err)
	}
	waitAddresses(b, ns, zone, addresses(n, "10.1."))
	// The burst's tail is not rest: JetStream forgets the burst's message
	// ids only when the streams' duplicate window (2 min) ends, a purge
	// that would otherwise land in the measured minutes.
	time.Sleep(idleSettle)
	return p, ops, cluster, ns, zone
}

func benchIdle(b *testing.B, n int, start atRest) {
	b.StopTimer()
	p, ops, _, _, _ := converged(b, n, start)
	pid := p.cmd.Process.Pid
	b.StartTimer()
	before := cpuSeconds(b, pid)
	time.Sleep(2 * time.Minute)
	b.ReportMetric((cpuSeconds(b, pid)-before)/2, "idle-cpu-s/min")
	b.StopTimer()
	b.ReportMetric(statusMiB(b, pid, "VmRSS"), "rss-MiB")
	// Of it, the pages of the executable mapped in (text, pclntab, rodata):
	// what no change to the heap moves.
	b.ReportMetric(statusMiB(b, pid, "RssFile"), "rss-file-MiB")
	if ops == "" {
		return // a process without pprof (ExternalDNS)
	}
	heap := fetchProfile(b, ops, "heap?gc=1")
	reportHeapByStage(b, heap, n)
	saveProfile(b, fmt.Sprintf("heap-%d", n), heap)
	if os.Getenv("ZS_IDLE_PROFILE_DIR") != "" {
		saveProfile(b, fmt.Sprintf("idle-%d", n), fetchProfile(b, ops, fmt.Sprintf("profile?seconds=%d", int(time.Minute.Seconds()))))
		// What that minute allocated, beside its CPU: go tool pprof
		// -sample_index=alloc_space -base heap-N.pprof heap-after-N.pprof
		// (the allocation counts move only at a collection: both force one).
		saveProfile(b, fmt.Sprintf("heap-after-%d", n), fetchProfile(b, ops, "heap?gc=1"))
	}
}

func benchWork(b *testing.B, n int, start atRest) {
	b.StopTimer()
	p, ops, cluster, ns, zone := converged(b, n, start)
	pid := p.cmd.Process.Pid
	// About 4 s per 1000 changes; the profile covers them all.
	profiled := profileCPU(b, ops, "work", max(10*time.Second, time.Duration(n)*6*time.Millisecond))
	b.StartTimer()
	before := cpuSeconds(b, pid)
	if err := moveServices(context.Background(), cluster.Client, n); err != nil {
		b.Fatal(err)
	}
	waitAddresses(b, ns, zone, addresses(n, "10.2."))
	b.ReportMetric((cpuSeconds(b, pid)-before)*1000/float64(n), "cpu-s/1000-changes")
	b.StopTimer()
	<-profiled
}

// profileCPU saves a CPU profile of the process serving pprof at ops, for
// the next d, when $ZS_IDLE_PROFILE_DIR is set and ops is not empty; the
// channel closes once it is saved (at once when it is not taken).
func profileCPU(b *testing.B, ops, name string, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if os.Getenv("ZS_IDLE_PROFILE_DIR") == "" || ops == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		saveProfile(b, name, fetchProfile(b, ops, fmt.Sprintf("profile?seconds=%d", int(d.Seconds()))))
	}()
	return done
}

// addresses are the A records of createServices' first n Services, their
// addresses under prefix (10.1. as created, 10.2. once moved).
func addresses(n int, prefix string) []string {
	var want []string
	for i := range n {
		want = append(want, "svc-"+strconv.Itoa(i)+" A "+strings.Replace(burstIP(i), "10.1.", prefix, 1))
	}
	return sorted(want)
}

// waitAddresses waits until the A records of zone's svc-* names are want.
// Only those are compared: ExternalDNS and zonestream are measured alike,
// whatever else each writes.
func waitAddresses(b *testing.B, ns *bind.Server, zone string, want []string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		all, err := transferZone(ns, zone)
		if err != nil {
			b.Fatal(err)
		}
		got := slices.DeleteFunc(all, func(s string) bool { return !strings.HasPrefix(s, "svc-") || !strings.Contains(s, " A ") })
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			missing, extra := diff(want, got)
			b.Fatalf("BIND still differs: %d missing (e.g. %v), %d unexpected (e.g. %v)", len(missing), head(missing), len(extra), head(extra))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// moveServices gives each of the first n Services (createServices') a new
// load balancer address: 10.1.x.y becomes 10.2.x.y.
func moveServices(ctx context.Context, kc kubernetes.Interface, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			_, err := setServiceIP(ctx, kc, "svc-"+strconv.Itoa(i), strings.Replace(burstIP(i), "10.1.", "10.2.", 1))
			return err
		})
	}
	return g.Wait()
}

// cpuSeconds is utime+stime of pid (fields 14 and 15 of /proc/pid/stat).
func cpuSeconds(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces; count after its ')'.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}

// statusMiB is a field of pid's /proc status counted in kB (VmRSS,
// RssFile), in MiB.
func statusMiB(b *testing.B, pid int, field string) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// fetchProfile gets /debug/pprof/<which> from the process serving it on ops.
func fetchProfile(b *testing.B, ops, which string) []byte {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s", ops, which))
	if err != nil {
		b.Error(err)
		return nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Errorf("profile: %v %s", err, resp.Status)
		return nil
	}
	return raw
}

func saveProfile(b *testing.B, name string, raw []byte) {
	dir := os.Getenv("ZS_IDLE_PROFILE_DIR")
	if dir == "" || raw == nil {
		return
	}
	path := filepath.Join(dir, name+".pprof")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Error(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Error(err)
	}
	b.Logf("profile: %s (go tool pprof -top %s)", path, path)
}
