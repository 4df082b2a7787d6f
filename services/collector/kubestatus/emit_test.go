package kubestatus

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// eventLog is a Sink that keeps the reasons of the Events it is handed.
type eventLog struct{ reasons []string }

func (l *eventLog) Event(_ events.ObjectRef, _ string, o Outcome) {
	_, reason, _, _ := EventOf(o)
	l.reasons = append(l.reasons, reason)
}
func (l *eventLog) Condition(events.ObjectRef) {}

// TestOnlyTheEventsAskedForAreWritten: --events-emit picks Events by
// reason, and none are written without it.
func TestOnlyTheEventsAskedForAreWritten(t *testing.T) {
	obj := events.ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	all := []Transition{
		{Object: obj, Name: "a.example.org", From: Outcome{State: Pending}, To: Outcome{State: Published}},
		{Object: obj, Name: "b.example.org", From: Outcome{State: Published}, To: Outcome{State: Deleted}},
		{Object: obj, Name: "c.example.org", From: Outcome{State: Pending}, To: Outcome{State: Failed, Failures: 1, Detail: "refused"}},
		{Object: obj, Name: "d.example.org", From: Outcome{State: Pending}, To: Outcome{State: Rejected, Reason: ReasonOutranked}},
		{Object: obj, Name: "example.org", To: Outcome{State: Held, Reason: EventDeleteHeld}},
	}
	for _, tc := range []struct {
		emit []string
		want []string
	}{
		{nil, nil},
		{[]string{EventRecordReady}, []string{EventRecordReady}},
		{[]string{EventRecordError, EventRecordRejected}, []string{EventRecordError, EventRecordRejected}},
		{EventReasons, EventReasons},
	} {
		sink := &eventLog{}
		s := New(func(events.ObjectRef) bool { return true }, func(events.ObjectRef) bool { return false },
			registry.Settings{}, sink, nil, WithEvents(tc.emit...))
		s.replay = false
		s.report(all)
		if !slices.Equal(sink.reasons, tc.want) {
			t.Errorf("--events-emit=%v wrote %v, want %v", tc.emit, sink.reasons, tc.want)
		}
	}
	if err := CheckEventReasons([]string{EventRecordReady, "RecordReddy"}); err == nil {
		t.Error("an unknown reason passed the check")
	}
}
