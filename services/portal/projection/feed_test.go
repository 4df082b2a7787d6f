package projection

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// feeder hands events to an Apply method as the bus delivers them: encoded,
// one sequence after the other, stored at the time now returns.
func feeder(t *testing.T, now func() time.Time) func(apply func(events.Received) error, subject string, ev events.Event) {
	seq := uint64(0)
	return func(apply func(events.Received) error, subject string, ev events.Event) {
		t.Helper()
		msg, err := events.Message(subject, ev, "")
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if err := apply(events.Received{Subject: subject, Header: msg.Header, Data: msg.Data, Seq: seq, Time: now()}); err != nil {
			t.Fatal(err)
		}
	}
}
