package gcpace

import (
	"math"
	"runtime/metrics"
)

// minGoal is the smallest heap goal, as the runtime's own (4 MiB at
// GOGC=100): a tiny heap is not collected at every few allocations.
const minGoal = 4 << 20

// Limit is the memory limit at which the runtime collects where GOGC=100
// would: the live heap of the last collection grown by itself, its stacks
// and globals (the runtime's heap goal), plus what the runtime holds
// beside heap objects (stacks, metadata, fragmentation inside spans).
// Free pages it keeps from an earlier peak are not counted in: the limit
// has the scavenger return them to the OS as the heap grows into them.
func Limit() int64 {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(samples)
	live := value(samples[0])
	goal := max(live+live+value(samples[1])+value(samples[2]), minGoal)
	beside := max(value(samples[3])-value(samples[4])-value(samples[5])-value(samples[6]), 0)
	return goal + beside
}

// value is a sample's bytes; 0 for a metric this runtime does not have.
func value(s metrics.Sample) int64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s.Value.Uint64(), math.MaxInt64/4))
}
