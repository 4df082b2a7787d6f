package web

import (
	"maps"
	"slices"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// withRecords fills in what a view leaves on the bus, the endpoints
// wanted and the records each provider holds, from the name's history,
// which read them. What the history lacks (the bus could not be read)
// comes from the view's record sets, without TTLs.
func withRecords(v *projection.View, hist []history.Entry) {
	if v.Desired != nil {
		if d, ok := pick(hist, v.Desired.Seq, func(*events.DesiredState) bool { return true }); ok {
			v.Desired.Endpoints = d.Endpoints
		} else {
			v.Desired.Endpoints = setsAsEndpoints(v.Name, v.RecordSets())
		}
	}
	for provider, o := range v.Observed {
		if st, ok := pick(hist, o.Seq, func(st *events.ObservedState) bool {
			return st.Provider == provider && st.DNSName == v.Name
		}); ok {
			o.Records = st.Records
		} else {
			o.Records = setsAsEndpoints(v.Name, o.RecordSets())
		}
	}
}

// pick is the history's event of type T that match accepts, stored at
// seq (the view's), or the newest when the bus moved on since.
func pick[T any](hist []history.Entry, seq uint64, match func(T) bool) (T, bool) {
	var newest T
	var newestSeq uint64
	found := false
	for _, e := range hist {
		ev, ok := e.Event.(T)
		if !ok || !match(ev) {
			continue
		}
		if e.Seq == seq {
			return ev, true
		}
		if !found || e.Seq > newestSeq {
			newest, newestSeq, found = ev, e.Seq, true
		}
	}
	return newest, found
}

// setsAsEndpoints are record sets as endpoints at name, without TTLs.
func setsAsEndpoints(name string, sets map[string][]string) []events.Endpoint {
	var out []events.Endpoint
	for _, t := range slices.Sorted(maps.Keys(sets)) {
		out = append(out, events.NewEndpoint(name, t, 0, sets[t]...))
	}
	return out
}
