package main

import (
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// results are the figures of a run: benchmark name (without the -GOMAXPROCS
// suffix) and unit to value. A benchmark run more than once keeps its last
// figure.
type results map[string]map[string]float64

func (rs results) add(r io.Reader) (int, error) {
	n := 0
	rd := benchfmt.NewReader(r, "benchmarks")
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error or unit metadata: not a figure
		}
		// benchfmt drops the Benchmark prefix; the table names benchmarks
		// as `go test -bench` does.
		name := "Benchmark" + string(res.Name.Full())
		if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
			name = name[:i]
		}
		if rs[name] == nil {
			rs[name] = map[string]float64{}
		}
		for _, v := range res.Values {
			// OrigUnit is set only where benchfmt tidied the unit (ns/op).
			unit, value := v.OrigUnit, v.OrigValue
			if unit == "" {
				unit, value = v.Unit, v.Value
			}
			rs[name][unit] = value
			n++
		}
	}
	return n, rd.Err()
}

// allParts ends a unit that stands for the sum of every unit it is the
// prefix of: "B/name-" + allParts is the heap per name of all parts.
const allParts = "*"

// get is a figure, and whether the run has it.
func (rs results) get(m metric) (float64, bool) {
	prefix, sum := strings.CutSuffix(m.unit, allParts)
	if !sum {
		v, ok := rs[m.bench][m.unit]
		return v, ok
	}
	total, found := 0.0, false
	for unit, v := range rs[m.bench] {
		if strings.HasPrefix(unit, prefix) {
			total, found = total+v, true
		}
	}
	return total, found
}
