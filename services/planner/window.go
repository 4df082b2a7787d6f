package planner

import "time"

// window decides when the planner's loop runs its next pass. With no
// message waiting to be read, a pass runs at once: a change to a free
// zone goes out without delay, and changes to a busy zone gather on
// their own until its plans are answered. While messages keep coming,
// a pass waits at most --batch-window for them, so a steady stream
// cannot postpone planning forever.
//
// A pass at once runs only when the last one ended at least its own
// length ago, or a window ago if that is shorter: a pass over many
// waiting names leaves the loop time to read messages before the next.
//
// Spacing every pass a window after the last (as Nagle's algorithm does)
// was tried: a lone change took 19 ms to BIND instead of 10, and 1000
// changes cost no less CPU within the benchmark's spread (1.2-1.7 CPU-s).
type window struct {
	max   time.Duration // --batch-window
	timer *time.Timer
	due   time.Time // when the armed timer fires; zero: not armed
	took  time.Duration
	ended time.Time
}

func newWindow(limit time.Duration) *window {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &window{max: limit, timer: t}
}

// armed reports whether a pass is due later.
func (w *window) armed() bool { return !w.due.IsZero() }

// passNow reports whether the pass is due now; if not, it arms the timer
// for when it is. queued says whether messages wait to be read.
func (w *window) passNow(queued bool, now time.Time) bool {
	due := w.due
	if due.IsZero() {
		due = now.Add(w.max)
	}
	if spaced := w.ended.Add(w.took); !queued && spaced.Before(due) {
		due = spaced
	}
	if !now.Before(due) {
		w.stop()
		return true
	}
	if !due.Equal(w.due) {
		w.due = due
		w.timer.Reset(due.Sub(now))
	}
	return false
}

// stop disarms the timer: a pass is running.
func (w *window) stop() {
	w.timer.Stop()
	w.due = time.Time{}
}

// passed records a pass that ran from start to end.
func (w *window) passed(start, end time.Time) { w.took, w.ended = end.Sub(start), end }
