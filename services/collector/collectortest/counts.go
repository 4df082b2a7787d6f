package collectortest

import "testing"

// Counts returns the number of messages on the subjects of the objects
// named, subj giving an object's subject.
func Counts(tb testing.TB, subj func(name string) string, names ...string) map[string]uint64 {
	tb.Helper()
	out := map[string]uint64{}
	for _, n := range names {
		out[n] = Count(tb, subj(n))
	}
	return out
}

// ExpectCounts checks that the objects in grown got exactly one more
// message since before, and every other one none.
func ExpectCounts(tb testing.TB, subj func(name string) string, before map[string]uint64, grown ...string) {
	tb.Helper()
	for n, b := range before {
		want := b
		for _, g := range grown {
			if g == n {
				want++
			}
		}
		if got := Count(tb, subj(n)); got != AfterTombstone(tb, subj(n), want) {
			tb.Errorf("%s: %d messages, want %d", n, got, want)
		}
	}
}
