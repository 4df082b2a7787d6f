package collectortest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// LastState returns the last state published on subj, if any.
func LastState(tb testing.TB, subj string) (*events.SourceState, bool) {
	tb.Helper()
	st, err := JS.Stream(tb.Context(), events.StreamSources)
	if err != nil {
		tb.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(tb.Context(), subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, false
	}
	if err != nil {
		tb.Fatal(err)
	}
	var s events.SourceState
	if err := events.Unmarshal(msg.Header, msg.Data, &s); err != nil {
		tb.Fatal(err)
	}
	if h := msg.Header.Get(events.HeaderHash); h != events.Hash(msg.Data) {
		tb.Fatalf("%s: hash header %s does not match payload", subj, h)
	}
	return &s, true
}

// Count is how many states subj went through since it was last deleted:
// the messages published on it since its last tombstone, that one
// included (a tombstone replaces what the subject held).
func Count(tb testing.TB, subj string) uint64 {
	tb.Helper()
	var n uint64
	for _, r := range History(tb, subj) {
		n++
		if isTombstone(r) {
			n = 1
		}
	}
	return n
}

// SubjectCounts is how many messages the sources stream holds on each
// subject matching filter.
func SubjectCounts(tb testing.TB, filter string) map[string]uint64 {
	tb.Helper()
	st, err := JS.Stream(context.Background(), events.StreamSources)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(filter))
	if err != nil {
		tb.Fatal(err)
	}
	return info.State.Subjects
}

// AfterTombstone is the Count of a subject that would count want had its
// last message not been a tombstone: a tombstone replaces what its
// subject held, leaving itself alone.
func AfterTombstone(tb testing.TB, subj string, want uint64) uint64 {
	tb.Helper()
	if s, ok := LastState(tb, subj); ok && s.IsTombstone() {
		return 1
	}
	return want
}

// Render is endpoints one a line, sorted, for comparing and printing.
func Render(eps []events.Endpoint) string {
	events.SortEndpoints(eps)
	var b strings.Builder
	for _, e := range eps {
		fmt.Fprintf(&b, "%s %s ttl=%d %v\n", e.DNSName, e.RecordType, e.RecordTTL, e.Targets)
	}
	return b.String()
}

// WaitState waits until the last state on subj has exactly want; an empty
// want waits for a tombstone (which must exist).
func WaitState(tb testing.TB, subj string, want []events.Endpoint) *events.SourceState {
	tb.Helper()
	w := Render(want)
	deadline := time.Now().Add(WaitFor)
	for {
		s, ok := LastState(tb, subj)
		if ok && Render(s.Endpoints) == w {
			return s
		}
		if time.Now().After(deadline) {
			got := "<nothing published>"
			if ok {
				got = Render(s.Endpoints)
			}
			tb.Fatalf("%s: last state\n%s\nwant\n%s", subj, got, w)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
