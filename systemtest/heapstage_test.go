package systemtest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// stageOf names the part of the all-in-one a function belongs to, by its
// package; "" when it belongs to none (the runtime, a library), so that
// the caller looks further up the stack.
func stageOf(function string) string {
	for _, s := range []struct{ prefix, stage string }{
		{"github.com/zonestream/zonestream/services/collector", "collector"},
		{"github.com/zonestream/zonestream/services/dedup", "dedup"},
		{"github.com/zonestream/zonestream/services/planner", "planner"},
		{"github.com/zonestream/zonestream/services/applier", "applier"},
		{"github.com/zonestream/zonestream/services/portal", "portal"},
		{"github.com/nats-io/nats-server", "nats-server"},
		{"k8s.io/client-go", "informers"},
	} {
		if strings.HasPrefix(function, s.prefix) {
			return s.stage
		}
	}
	return ""
}

// heapByStage sums a heap profile's live bytes by the stage that
// allocated them: the innermost frame of a stage's package on each
// allocation's stack (a Service decoded by client-go for the collector's
// transform counts as the collector's; one decoded by an informer as
// the informers'). What no stage allocated is "other" (runtime, the NATS
// client's buffers, package variables).
func heapByStage(raw []byte) (map[string]int64, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("heap profile has no inuse_space")
	}
	out := map[string]int64{}
	for _, s := range p.Sample {
		stage := "other"
	frames:
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				if st := stageOf(line.Function.Name); st != "" {
					stage = st
					break frames
				}
			}
		}
		out[stage] += s.Value[idx]
	}
	return out, nil
}

// reportHeapByStage reports each stage's live heap per Service.
func reportHeapByStage(b *testing.B, raw []byte, services int) {
	byStage, err := heapByStage(raw)
	if err != nil {
		b.Error(err)
		return
	}
	for stage, bytes := range byStage {
		b.ReportMetric(float64(bytes)/float64(services), "B/name-"+stage)
	}
}

// TestHeapByStageTakesTheInnermostStage: bytes go to the stage whose
// frame is nearest the allocation, library frames in between or not.
func TestHeapByStageTakesTheInnermostStage(t *testing.T) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
	}
	fn := map[string]*profile.Function{}
	// sample adds a sample of size bytes allocated by stack, innermost
	// frame first, as pprof lists them.
	sample := func(size int64, stack ...string) {
		s := &profile.Sample{Value: []int64{1, size}}
		for _, name := range stack {
			if fn[name] == nil {
				fn[name] = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				p.Function = append(p.Function, fn[name])
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn[name]}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	sample(100, "github.com/vmihailenco/msgpack/v5.(*Decoder).stringWithLen",
		"github.com/zonestream/zonestream/events.Unmarshal", "github.com/zonestream/zonestream/services/dedup.(*run).fold",
		"github.com/zonestream/zonestream/services/planner.notReally")
	sample(20, "github.com/zonestream/zonestream/services/collector/source.keepAnnotations",
		"k8s.io/client-go/tools/cache.(*DeltaFIFO).Pop")
	sample(7, "encoding/json.(*decodeState).object", "k8s.io/client-go/tools/cache.(*Reflector).watch")
	sample(3, "runtime.malg")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := heapByStage(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"dedup": 100, "collector": 20, "informers": 7, "other": 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
