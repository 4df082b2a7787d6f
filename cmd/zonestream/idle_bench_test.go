package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// BenchmarkIdle measures the all-in-one at rest (issue 11): N Services in
// BIND, nothing changing, --interval=1m. It reports the process's own
// CPU-seconds (utime+stime from /proc, not wall time: the machine is
// shared) over two idle minutes, the RSS after them, and writes a CPU
// profile of a third minute to $ZS_IDLE_PROFILE_DIR when set (that minute
// is not a figure: the profiler's own signals roughly double it).
func BenchmarkIdle(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				benchIdle(b, n)
			}
		})
	}
}

// idleSettle is how long after convergence the measure starts: past the
// streams' duplicate window (events/streams.go), plus GC and acks.
const idleSettle = 2*time.Minute + 15*time.Second

func benchIdle(b *testing.B, n int) {
	b.StopTimer()
	const zone = "idle.test"
	cluster := kube.StartT(b)
	ns := bind.StartT(b, zone)
	ops := loopbackAddr(b)
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--interval=1m",
		"--nats-listen=127.0.0.1:0", "--data-dir=" + b.TempDir(), "--metrics-address=" + ops, "--pprof", "--log-level=warn"},
		rfc2136Flags(ns, zone, "bench")...)
	p := startProcess(b, "zonestream", args...)
	ctx := context.Background()
	if err := createServices(ctx, cluster.Client, zone, 0, n); err != nil {
		b.Fatal(err)
	}
	want := slices.DeleteFunc(burstZone(zone, "bench", n), func(s string) bool { return s == "legacy A 192.0.2.99" })
	waitZone(b, ns, zone, want, 3*time.Minute)
	// The burst's tail is not rest: JetStream forgets the burst's message
	// ids only when the streams' duplicate window (2 min) ends, a purge
	// that would otherwise land in the measured minutes.
	time.Sleep(idleSettle)
	pid := p.cmd.Process.Pid
	b.StartTimer()
	for minute := 1; minute <= 2; minute++ {
		before := cpuSeconds(b, pid)
		time.Sleep(time.Minute)
		b.ReportMetric(cpuSeconds(b, pid)-before, fmt.Sprintf("idle-cpu-s/min#%d", minute))
	}
	b.StopTimer()
	b.ReportMetric(rssMiB(b, pid), "rss-MiB")
	if os.Getenv("ZS_IDLE_PROFILE_DIR") != "" {
		saveProfile(b, n, fetchProfile(b, ops, time.Minute))
	}
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

// rssMiB is VmRSS of pid.
func rssMiB(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

func fetchProfile(b *testing.B, ops string, d time.Duration) []byte {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", ops, int(d.Seconds())))
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

func saveProfile(b *testing.B, n int, raw []byte) {
	dir := os.Getenv("ZS_IDLE_PROFILE_DIR")
	if dir == "" || raw == nil {
		return
	}
	path := filepath.Join(dir, fmt.Sprintf("idle-%d.pprof", n))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Error(err)
	}
	b.Logf("idle CPU profile: %s (go tool pprof -top %s)", path, path)
}

// loopbackAddr is a loopback TCP address nothing listens on right now.
func loopbackAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
