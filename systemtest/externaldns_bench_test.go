package systemtest

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// externalDNSVersion is the ExternalDNS release zonestream's cost is
// compared with in the cost table; hack/bench-table.sh builds it from the module
// proxy into the tools cache.
const externalDNSVersion = "v0.21.0"

// BenchmarkExternalDNS measures ExternalDNS exactly as BenchmarkIdle and
// BenchmarkWorkPerChange measure zonestream: the same kube-apiserver, BIND,
// Services, settle time and /proc figures, with the same ExternalDNS
// command line (--interval=1m). The binary is $ZS_EXTERNAL_DNS, else the
// tools cache's.
func BenchmarkExternalDNS(b *testing.B) {
	bin := cmp.Or(os.Getenv("ZS_EXTERNAL_DNS"), filepath.Join(os.Getenv("HOME"), ".cache", "zonestream", "tools",
		"external-dns-"+externalDNSVersion, "external-dns"))
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("no ExternalDNS binary (%v): hack/bench-table.sh builds it", err)
	}
	start := func(b *testing.B, cluster *kube.Cluster, ns *bind.Server, zone string) (*process, string) {
		args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--interval=1m",
			"--metrics-address=" + loopback.Addr(b), "--log-level=warning"}, rfc2136Flags(ns, zone, "bench")...)
		return startCommand(b, "external-dns", bin, args...), ""
	}
	for _, n := range idleSizes(b) {
		b.Run(fmt.Sprintf("idle/services=%d", n), func(b *testing.B) {
			for range b.N {
				benchIdle(b, n, start)
			}
		})
	}
	b.Run("work/services=1000", func(b *testing.B) {
		for range b.N {
			benchWork(b, 1000, start)
		}
	})
}
