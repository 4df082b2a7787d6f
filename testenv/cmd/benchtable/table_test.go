package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/zonestream/zonestream/systemtest
cpu: AMD EPYC
BenchmarkIdle/services=5000-2         	       1	300012345678 ns/op	  0.1550 idle-cpu-s/min	        88.50 rss-MiB	  3420 B/name-portal	  700 B/name-dedup
BenchmarkIdle/services=20000-2         	       1	300012345678 ns/op	  0.3000 idle-cpu-s/min	        300.0 rss-MiB	  3000 B/name-portal
BenchmarkExternalDNS/idle/services=5000-2 	       1	300012345678 ns/op	  0.2200 idle-cpu-s/min	       116.0 rss-MiB
BenchmarkExternalDNS/idle/services=20000-2 	       1	300012345678 ns/op	  0.4000 idle-cpu-s/min	       200.0 rss-MiB
BenchmarkIdleFloor-2         	       1	120000000000 ns/op	  0.1500 idle-cpu-s/min
BenchmarkWorkPerChange/services=1000-2         	       1	3662696104 ns/op	         1.350 cpu-s/1000-changes
some log line in between
BenchmarkStatusToRecord-2   	      20	  40000000 ns/op	        36.50 median-ms	        41.00 p90-ms
BenchmarkScale/names=1000000-2   	       1	900000000000 ns/op	       612.0 converge-s	        30.00 one-change-ms	  9000 rss-MiB	  12000 peak-rss-MiB	 0 first-start-writes
pkg: github.com/zonestream/zonestream/services/applier
BenchmarkApply/pdns/zone=10000/plan=1000-2         	       3	 900000000 ns/op	 1200 zs-changes/s	 2900 bare-changes/s	 0.4138 zs/bare
BenchmarkApply/rfc2136/zone=10000/plan=1000-2      	       3	 900000000 ns/op	 5000 zs-changes/s	 6000 bare-changes/s	 0.8333 zs/bare
`

func TestTableFromBenchmarkOutput(t *testing.T) {
	rs := results{}
	n, err := rs.add(strings.NewReader(sample))
	if err != nil || n != 36 {
		t.Fatalf("read %d figures, err %v; want 36 (ns/op included)", n, err)
	}
	got := map[string]line{}
	for _, l := range table(rs) {
		got[l.what] = l
	}
	for what, want := range map[string]line{
		"idle CPU, 5000 Services (CPU-s/min)":                    {zs: "0.155", ref: "ExternalDNS 0.22", met: "yes"},
		"idle CPU, 20,000 Services (CPU-s/min)":                  {zs: "0.3", ref: "ExternalDNS 0.4", met: "no"},
		"RSS, 5000 Services (MiB)":                               {zs: "88.50", ref: "ExternalDNS 116", met: "yes"},
		"RSS, 20,000 Services (MiB)":                             {zs: "300", ref: "ExternalDNS 200", met: "no"},
		"RSS, 1000 Services (MiB)":                               {zs: "not measured"},
		"live heap per name, all parts, 5000 Services (bytes)":   {zs: "4120", met: "no"},
		"live heap per name, all parts, 20,000 Services (bytes)": {zs: "3000", met: "yes"},
		"heap per name at 20,000 Services, portal (bytes)":       {zs: "3000"},
		"heap per name at 20,000 Services, dedup (bytes)":        {zs: "not measured"},
		"work: CPU-s per 1000 Service status changes":            {zs: "1.35", met: "not judged: its reference was not measured"},
		"one status change to BIND, median (ms)":                 {zs: "36.50", ref: "ExternalDNS 5600 (the goal's figure)"},
		"PowerDNS: applier / bare client, 1000-change plans":     {zs: "0.414", ref: "bare client = 1", met: "no"},
		"BIND: applier / bare client, 1000-change plans":         {zs: "0.833", ref: "bare client = 1", met: "yes"},
		"pipeline throughput (endpoint events/s)":                {zs: "not measured"},
		"1,000,000 names (moonshot): converge in BIND (s)":       {zs: "612"},
		"1,000,000 names (moonshot): peak RSS (MiB)":             {zs: "12000"},
		"1,000,000 names (moonshot): first start writes":         {zs: "0", met: "yes"},
		"100k names: converge in BIND (s)":                       {zs: "not measured"},
	} {
		l, ok := got[what]
		if !ok {
			t.Errorf("no row %q", what)
			continue
		}
		if l.zs != want.zs || l.ref != want.ref || l.met != want.met {
			t.Errorf("%s: got %q / %q / %q, want %q / %q / %q", what, l.zs, l.ref, l.met, want.zs, want.ref, want.met)
		}
	}
}

func TestNoFiguresIsAnError(t *testing.T) {
	if n, err := (results{}).add(strings.NewReader("PASS\nok  \tpkg\t1s\n")); err != nil || n != 0 {
		t.Fatalf("read %d figures, err %v", n, err)
	}
}
