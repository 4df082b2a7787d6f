package events

import (
	"fmt"
	"testing"
)

// BenchmarkEncode is the cost of encoding a plan of n changes as a payload
// (Marshal), as a hash (HashOf) and as a size (Size): allocations per op
// show what the encoding buffers save.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{1, 1000} {
		plan := &Plan{ID: "bench", Provider: "rfc2136", Zone: "example.org"}
		for i := range n {
			ep := NewEndpoint(fmt.Sprintf("svc-%d.example.org", i), "A", 300, fmt.Sprintf("10.0.%d.%d", i/250, i%250))
			plan.Changes = append(plan.Changes, Change{New: &ep})
		}
		for _, c := range []struct {
			name string
			do   func() error
		}{
			{"marshal", func() error { _, err := Marshal(plan); return err }},
			{"hash", func() error { _, err := HashOf(plan); return err }},
			{"size", func() error { _, err := Size(plan); return err }},
		} {
			b.Run(fmt.Sprintf("%s/changes=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := c.do(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
