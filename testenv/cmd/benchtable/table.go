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
	// met says whether zonestream's figure meets the goal, given the
	// run's other figures (a goal may name ExternalDNS' or the floor's);
	// judged is false when the run lacks the figure the goal names.
	// nil: a figure with no goal of its own.
	met goal
}

type goal func(zs float64, rs results) (met, judged bool)

func atMost(limit float64) goal {
	return func(zs float64, _ results) (bool, bool) { return zs <= limit, true }
}

func atLeast(limit float64) goal {
	return func(zs float64, _ results) (bool, bool) { return zs >= limit, true }
}

// noMoreThan is met when zonestream's figure is at most m's plus slack.
func noMoreThan(m metric, slack float64) goal {
	return func(zs float64, rs results) (bool, bool) {
		ref, ok := rs.get(m)
		return zs <= ref+slack, ok
	}
}

// moonshot is a figure of BenchmarkScale at issue 25's 1,000,000 names
// (hack/bench-table.sh --rows moonshot).
func moonshot(unit string) metric { return metric{"BenchmarkScale/names=1000000", unit} }

func idle(n int) metric { return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "idle-cpu-s/min"} }
func rss(n int) metric  { return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "rss-MiB"} }
func rssFile(n int) metric {
	return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "rss-file-MiB"}
}
func edns(m metric) metric {
	return metric{strings.Replace(m.bench, "BenchmarkIdle", "BenchmarkExternalDNS/idle", 1), m.unit}
}

// idleFloor is the embedded JetStream alone: what the idle goal allows
// the stages 0.01 CPU-s/min above.
var idleFloor = metric{"BenchmarkIdleFloor", "idle-cpu-s/min"}

// heapPerName is the live heap per Service at n Services summed over
// every part of the all-in-one (BenchmarkIdle attributes a heap profile's
// bytes to the part that allocated them).
func heapPerName(n int) metric {
	return metric{fmt.Sprintf("BenchmarkIdle/services=%d", n), "B/name-" + allParts}
}

// perName is the live heap one part holds per Service, at 20,000 Services:
// the heap profile samples every 512 KiB, about 100 B a name at 5000.
func perName(part string) row {
	return row{what: "heap per name at 20,000 Services, " + part + " (bytes)",
		zs: metric{"BenchmarkIdle/services=20000", "B/name-" + part}}
}

var work = metric{"BenchmarkWorkPerChange/services=1000", "cpu-s/1000-changes"}
var ednsWork = metric{"BenchmarkExternalDNS/work/services=1000", "cpu-s/1000-changes"}

var rows = []row{
	{what: "idle CPU, 1000 Services (CPU-s/min)", zs: idle(1000), ref: edns(idle(1000))},
	{what: "idle CPU, 5000 Services (CPU-s/min)", goal: "≤ floor + 0.01", zs: idle(5000), ref: edns(idle(5000)),
		met: noMoreThan(idleFloor, 0.01)},
	{what: "idle CPU, 20,000 Services (CPU-s/min)", goal: "≤ floor + 0.01", zs: idle(20000), ref: edns(idle(20000)),
		met: noMoreThan(idleFloor, 0.01)},
	{what: "idle CPU, embedded JetStream alone, no stage (CPU-s/min)", zs: idleFloor,
		refText: "the floor under the idle goal"},
	{what: "RSS, 1000 Services (MiB)", zs: rss(1000), ref: edns(rss(1000))},
	{what: "RSS, 5000 Services (MiB)", goal: "≤ ExternalDNS", zs: rss(5000), ref: edns(rss(5000)), met: noMoreThan(edns(rss(5000)), 0)},
	{what: "RSS, 20,000 Services (MiB)", goal: "≤ ExternalDNS", zs: rss(20000), ref: edns(rss(20000)), met: noMoreThan(edns(rss(20000)), 0)},
	{what: "RSS at 5000 Services: of it, the executable's pages (MiB)",
		zs: rssFile(5000), ref: edns(rssFile(5000))},
	{what: "live heap per name, all parts, 5000 Services (bytes)", goal: "≤ 4096", zs: heapPerName(5000), met: atMost(4096)},
	{what: "live heap per name, all parts, 20,000 Services (bytes)", goal: "≤ 4096", zs: heapPerName(20000), met: atMost(4096)},
	perName("collector"), perName("informers"), perName("dedup"), perName("planner"), perName("applier"),
	perName("portal"), perName("nats-server"), perName("other"),
	{what: "work: CPU-s per 1000 Service status changes", goal: "≤ ExternalDNS", zs: work, ref: ednsWork,
		met: noMoreThan(ednsWork, 0)},
	{what: "one status change to BIND, median (ms)", zs: metric{"BenchmarkStatusToRecord", "median-ms"},
		refText: "ExternalDNS 5600 (the goal's figure)"},
	{what: "500 Services to BIND (s)", zs: metric{"BenchmarkConverge/500", "converge-s"}},
	{what: "100k names: converge in BIND (s)", goal: "≤ 20", zs: metric{"BenchmarkScale/names=100000", "converge-s"}, met: atMost(20)},
	{what: "100k names: one change to BIND (ms)", goal: "< 50 (kept)", zs: metric{"BenchmarkScale/names=100000", "one-change-ms"}, met: atMost(50)},
	{what: "100k names: first start writes", goal: "0 (kept)", zs: metric{"BenchmarkScale/names=100000", "first-start-writes"}, met: atMost(0)},
	{what: "1,000,000 names (moonshot): converge in BIND (s)", zs: moonshot("converge-s")},
	{what: "1,000,000 names (moonshot): one change to BIND (ms)", zs: moonshot("one-change-ms")},
	{what: "1,000,000 names (moonshot): RSS after converging (MiB)", zs: moonshot("rss-MiB")},
	{what: "1,000,000 names (moonshot): peak RSS (MiB)", zs: moonshot("peak-rss-MiB")},
	{what: "1,000,000 names (moonshot): first start writes", goal: "0 (kept)", zs: moonshot("first-start-writes"), met: atMost(0)},
	{what: "pipeline throughput (endpoint events/s)", goal: "≥ 25000", zs: metric{"BenchmarkThroughput", "events/s"},
		ref: metric{"BenchmarkThroughput", "publish-floor-msg/s"}, met: atLeast(25000)},
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
			if r.met != nil {
				switch met, judged := r.met(zs, rs); {
				case !judged:
					l.met = "not judged: its reference was not measured"
				case met:
					l.met = "yes"
				default:
					l.met = "no"
				}
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
