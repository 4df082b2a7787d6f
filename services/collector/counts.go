package collector

import (
	"slices"
	"sync"

	"github.com/zonestream/zonestream/events"
)

// endpointCounts are the endpoints the objects want now, in all
// (external_dns_source_endpoints_total) and by record type
// (external_dns_source_records), kept per object so that an object's new
// state replaces its old counts.
type endpointCounts struct {
	mu sync.Mutex
	// objects holds, per subject, its object's endpoints by record type:
	// a short slice rather than a map, as nearly every object wants one
	// type, and a map per object cost ten times the bytes.
	objects map[string][]typeCount
	total   int
	byType  map[string]int
}

type typeCount struct {
	recordType string
	n          int
}

// set takes eps as what the object at subject wants now, and updates the
// metrics.
func (c *endpointCounts) set(subject string, eps []events.Endpoint) {
	var counts []typeCount
	for _, ep := range eps {
		i := slices.IndexFunc(counts, func(t typeCount) bool { return t.recordType == ep.RecordType })
		if i < 0 {
			counts = append(counts, typeCount{recordType: ep.RecordType})
			i = len(counts) - 1
		}
		counts[i].n++
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objects == nil {
		c.objects, c.byType = map[string][]typeCount{}, map[string]int{}
	}
	for _, t := range c.objects[subject] {
		c.total -= t.n
		c.byType[t.recordType] -= t.n
	}
	for _, t := range counts {
		c.total += t.n
		c.byType[t.recordType] += t.n
	}
	if len(counts) == 0 {
		delete(c.objects, subject)
	} else {
		c.objects[subject] = slices.Clip(counts)
	}
	sourceEndpoints.Set(float64(c.total))
	for typ, n := range c.byType {
		sourceRecords.WithLabelValues(typ).Set(float64(n))
		if g, ok := sourceByType[typ]; ok {
			g.Set(float64(n))
		}
	}
}
