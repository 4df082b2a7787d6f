package systemtest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// wantedLedger knows, for every Service the chaos test made and for the
// record planted beside them, when its records were wanted: from the
// moment the Service had its address (the call that gave it returned) to
// the moment its delete was sent. A plan seen in between was published
// before the delete was asked for; if it deletes the Service's A record or
// its ownership TXT, the pipeline deleted something still wanted. Names
// get no second life: a deleted Service's name is never used again, so a
// record at a name cannot be an older incarnation's.
type wantedLedger struct {
	zone string
	mu   sync.Mutex
	// spans by the record's first label: the Service's name.
	spans map[string]*wantedSpan
}

type wantedSpan struct{ from, until time.Time } // until zero: still wanted

func newWantedLedger(zone string) *wantedLedger {
	return &wantedLedger{zone: events.NormalizeName(zone), spans: map[string]*wantedSpan{}}
}

func (l *wantedLedger) wanted(label string, from time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spans[label] = &wantedSpan{from: from}
}

func (l *wantedLedger) unwanted(label string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.spans[label]; s != nil && s.until.IsZero() {
		s.until = at
	}
}

// wrongful reports whether the delete hit a record wanted when its plan was
// seen (which is after it was published): an A record of a wanted Service
// (or the planted one), its ownership TXT "a-<name>", or anything at a name
// the test never made, which zonestream does not own and must never change.
func (l *wantedLedger) wrongful(d tappedDelete) bool {
	label, ok := strings.CutSuffix(d.name, "."+l.zone)
	if !ok || strings.Contains(label, ".") {
		return true // outside what the test made: never ours to delete
	}
	switch d.kind {
	case events.RecordTypeA:
	case events.RecordTypeTXT:
		if label, ok = strings.CutPrefix(label, "a-"); !ok {
			return true
		}
	default:
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.spans[label]
	if s == nil {
		return true
	}
	return !d.at.Before(s.from) && (s.until.IsZero() || d.at.Before(s.until))
}

// TestWantedLedgerJudgesDeletes: the chaos test's judge of wrongful deletes
// blames exactly the deletes seen while their record was wanted, and
// anything at a name the test never made.
func TestWantedLedgerJudgesDeletes(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	l := newWantedLedger("chaos.test")
	l.wanted("svc-0", at(0))  // stable
	l.wanted("t0-v1", at(10)) // volatile: address set at 10s, delete sent at 20s
	l.unwanted("t0-v1", at(20))
	for _, c := range []struct {
		d    tappedDelete
		want bool
	}{
		{tappedDelete{at: at(5), name: "svc-0.chaos.test", kind: "A"}, true},
		{tappedDelete{at: at(5), name: "a-svc-0.chaos.test", kind: "TXT"}, true},
		{tappedDelete{at: at(15), name: "t0-v1.chaos.test", kind: "A"}, true},
		{tappedDelete{at: at(15), name: "a-t0-v1.chaos.test", kind: "TXT"}, true},
		{tappedDelete{at: at(20), name: "t0-v1.chaos.test", kind: "A"}, false}, // after its delete was sent
		{tappedDelete{at: at(25), name: "a-t0-v1.chaos.test", kind: "TXT"}, false},
		{tappedDelete{at: at(5), name: "t0-v1.chaos.test", kind: "A"}, false}, // before it had an address: nothing to delete
		{tappedDelete{at: at(5), name: "ns.chaos.test", kind: "A"}, true},     // the zone's own
		{tappedDelete{at: at(5), name: "chaos.test", kind: "NS"}, true},
		{tappedDelete{at: at(5), name: "svc-0.chaos.test", kind: "AAAA"}, true},
		{tappedDelete{at: at(5), name: "x.svc-0.chaos.test", kind: "A"}, true},
	} {
		if got := l.wrongful(c.d); got != c.want {
			t.Errorf("wrongful(%s) = %v, want %v", c.d, got, c.want)
		}
	}
}
