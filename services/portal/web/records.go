package web

import (
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// withRecords fills in what a view leaves on the bus, the endpoints
// wanted and the records each provider holds, from the name's history,
// which read them: each from the entry of the view's sequence, or from
// the newest when the bus moved on since.
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
	if desired != nil {
		v.Desired.Endpoints = desired.Endpoints
	}
	for provider, o := range observed {
		v.Observed[provider].Records = o.Records
	}
}
