package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// metric names one figure: a benchmark and a unit it reports.
type metric struct{ bench, unit string }

// row is one line of the table.
type row struct {
	what string
	goal string
	zs   metric
	// ref is the reference measured in the same run (ExternalDNS); refText
	// is the reference when none is (a figure the goal names, a floor).
	ref     metric
	refText string
	// met says whether zonestream's figure meets the goal; ref is 0 when
	// the run has no reference figure. nil: a figure with no goal of its own.
	met func(zs, ref float64) bool
}

func atMost(limit float64) func(zs, ref float64) bool {
	return func(zs, _ float64) bool { return zs <= limit }
}

func atLeast(limit float64) func(zs, ref float64) bool {
	return func(zs, _ float64) bool { return zs >= limit }
}

// workBaseline is CPU-seconds of the all-in-one per 1000 Service status
// changes, the figure to halve: BenchmarkWorkPerChange's first run, on
// main at 1657402 (2026-11-24), on this 2-core machine.
const workBaseline = 0.84

func idle(n int) metric { return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "idle-cpu-s/min"} }
func rss(n int) metric  { return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "rss-MiB"} }
func rssFile(n int) metric {
	return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "rss-file-MiB"}
}
func edns(m metric) metric {
	return metric{strings.Replace(m.bench, "BenchmarkIdle", "BenchmarkExternalDNS/idle", 1), m.unit}
}

// perName is the live heap one stage holds per Service at 5000 Services
// (BenchmarkIdle attributes a heap profile's bytes to the stage that
// allocated them).
func perName(stage string) row {
	return row{what: "heap per name at 5000 Services, " + stage + " (bytes)",
		zs: metric{"BenchmarkIdle/services=5000", "B/name-" + stage}}
}

var rows = []row{
	{what: "idle CPU, 1000 Services (CPU-s/min)", zs: idle(1000), ref: edns(idle(1000))},
	{what: "idle CPU, 5000 Services (CPU-s/min)", goal: "≤ 0.02", zs: idle(5000), ref: edns(idle(5000)), met: atMost(0.02)},
	{what: "idle CPU, embedded JetStream alone, no stage (CPU-s/min)", zs: metric{"BenchmarkIdleFloor", "idle-cpu-s/min"},
		refText: "the floor under the idle goal"},
	{what: "RSS, 1000 Services (MiB)", zs: rss(1000), ref: edns(rss(1000))},
	{what: "RSS, 5000 Services (MiB)", goal: "≤ 90", zs: rss(5000), ref: edns(rss(5000)), met: atMost(90)},
	{what: "RSS, 20000 Services (MiB)", zs: rss(20000), ref: edns(rss(20000))},
	{what: "RSS at 5000 Services: of it, the executable's pages (MiB)",
		zs: rssFile(5000), ref: edns(rssFile(5000))},
	perName("collector"), perName("informers"), perName("dedup"), perName("planner"), perName("applier"),
	perName("portal"), perName("nats-server"), perName("other"),
	{what: "work: CPU-s per 1000 Service status changes", goal: "half of the baseline",
		zs:  metric{"BenchmarkWorkPerChange/services=1000", "cpu-s/1000-changes"},
		ref: metric{"BenchmarkExternalDNS/work/services=1000", "cpu-s/1000-changes"},
		met: func(zs, _ float64) bool { return workBaseline > 0 && zs <= workBaseline/2 }},
	{what: "one status change to BIND, median (ms)", zs: metric{"BenchmarkStatusToRecord", "median-ms"},
		refText: "ExternalDNS 5600 (the goal's figure)"},
	{what: "500 Services to BIND (s)", zs: metric{"BenchmarkConverge/500", "converge-s"}},
	{what: "100k names: converge in BIND (s)", goal: "< 5", zs: metric{"BenchmarkScale/names=100000", "converge-s"}, met: atMost(5)},
	{what: "100k names: one change to BIND (ms)", goal: "< 50", zs: metric{"BenchmarkScale/names=100000", "one-change-ms"}, met: atMost(50)},
	{what: "100k names: first start writes", goal: "0", zs: metric{"BenchmarkScale/names=100000", "first-start-writes"}, met: atMost(0)},
	{what: "pipeline throughput (endpoint events/s)", goal: "≥ 35000", zs: metric{"BenchmarkThroughput", "events/s"},
		ref: metric{"BenchmarkThroughput", "publish-floor-msg/s"}, met: atLeast(35000)},
	{what: "PowerDNS: applier / bare client, 1000-change plans", goal: "≥ 0.5",
		zs: metric{"BenchmarkApply/pdns/zone=10000/plan=1000", "zs/bare"}, refText: "bare client = 1", met: atLeast(0.5)},
	{what: "BIND: applier / bare client, 1000-change plans", goal: "≥ 0.7",
		zs: metric{"BenchmarkApply/rfc2136/zone=10000/plan=1000", "zs/bare"}, refText: "bare client = 1", met: atLeast(0.7)},
}

// line is one printed row.
type line struct{ what, goal, zs, ref, met string }

func table(rs results) []line {
	var out []line
	for _, r := range rows {
		l := line{what: r.what, goal: r.goal, zs: "not measured", ref: r.refText, met: ""}
		zs, ok := rs.get(r.zs)
		ref, refOK := rs.get(r.ref)
		if refOK {
			l.ref = "ExternalDNS " + format(ref)
			if r.ref.unit == "publish-floor-msg/s" {
				l.ref = "publish floor " + format(ref)
			}
		}
		if ok {
			l.zs = format(zs)
			switch {
			case r.met == nil:
			case r.met(zs, ref):
				l.met = "yes"
			default:
				l.met = "no"
			}
		}
		out = append(out, l)
	}
	return out
}

func format(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func print(w io.Writer, lines []line) {
	fmt.Fprintln(w, "| | goal | zonestream | reference | met |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, l := range lines {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", l.what, l.goal, l.zs, l.ref, l.met)
	}
}
