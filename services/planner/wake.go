package planner

import "time"

// The planner acts on messages, and on three things that change with time
// alone: a plan's deadline passes (expireFlights), a zone's back-off ends
// (notBefore) or a lost name's (lost.go), the completeness mark's lease lapses (expireCompleteness).
// Its loop sleeps until the earliest of them rather than ticking every
// second, so a planner at rest wakes for nothing but messages: at rest the pipeline should cost
// next to nothing.

// wakeAt is when the loop must look again without a message: the earliest
// deadline, back-off end or completeness lease still ahead. Zero: never.
func (r *run) wakeAt() time.Time {
	var at time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	if r.complete {
		earlier(r.completeUntil)
	}
	now := time.Now()
	for _, f := range r.flights {
		if len(f.plans) > 0 {
			earlier(f.deadline)
		}
		if f.notBefore.After(now) {
			earlier(f.notBefore)
		}
	}
	earlier(r.lost.nextAfter(now))
	return at
}

// alarm is a timer set to a time that moves: set re-arms it only when the
// time changed, and a zero time stops it.
type alarm struct {
	timer *time.Timer
	at    time.Time
}

func newAlarm() *alarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &alarm{timer: t}
}

func (a *alarm) set(at time.Time) {
	if at.Equal(a.at) {
		return
	}
	a.at = at
	if at.IsZero() {
		a.timer.Stop()
		return
	}
	// A moment past the time itself: what it ends is compared with
	// now.After (or Before), which is false at the instant.
	a.timer.Reset(time.Until(at) + time.Millisecond)
}

// rang is called when the timer fired, so that set arms it again even for
// the same time.
func (a *alarm) rang() { a.at = time.Time{} }
