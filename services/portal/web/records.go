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
// which read them: each from the entry of the view's sequence, or from
// the newest when the bus moved on since. What the history lacks (the
// bus could not be read) comes from the view's record sets, without TTLs.
func withRecords(v *projection.View, hist []history.Entry) {
	var desired *events.DesiredState
	var desiredSeq uint64
	observed := map[string]*events.ObservedState{}
	observedSeq := map[string]uint64{}
	// better says whether the entry at seq is a better pick than the one
	// at best, for the view's want.
	better := func(seq, best, want uint64) bool { return best != want && (seq == want || seq > best) }
	for _, e := range hist {
		switch ev := e.Event.(type) {
		case *events.DesiredState:
			if v.Desired != nil && better(e.Seq, desiredSeq, v.Desired.Seq) {
				desired, desiredSeq = ev, e.Seq
			}
		case *events.ObservedState:
			o := v.Observed[ev.Provider]
			if o != nil && ev.DNSName == v.Name && better(e.Seq, observedSeq[ev.Provider], o.Seq) {
				observed[ev.Provider], observedSeq[ev.Provider] = ev, e.Seq
			}
		}
	}
	if v.Desired != nil {
		v.Desired.Endpoints = setsAsEndpoints(v.Name, v.RecordSets())
		if desired != nil {
			v.Desired.Endpoints = desired.Endpoints
		}
	}
	for provider, o := range v.Observed {
		o.Records = setsAsEndpoints(v.Name, o.RecordSets())
		if st := observed[provider]; st != nil {
			o.Records = st.Records
		}
	}
}

// setsAsEndpoints are record sets as endpoints at name, without TTLs.
func setsAsEndpoints(name string, sets map[string][]string) []events.Endpoint {
	var out []events.Endpoint
	for _, t := range slices.Sorted(maps.Keys(sets)) {
		out = append(out, events.NewEndpoint(name, t, 0, sets[t]...))
	}
	return out
}
