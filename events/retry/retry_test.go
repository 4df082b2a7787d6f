package retry

import (
	"context"
	"testing"
	"time"
)

func TestDelayDoublesFromBaseToItsCap(t *testing.T) {
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for attempt, w := range want {
		if got := Delay(100, 1000, attempt); got != w {
			t.Errorf("Delay(100, 1000, %d) = %v, want %v", attempt, got, w)
		}
	}
	if got := Delay(time.Second, time.Minute, 1<<20); got != time.Minute {
		t.Errorf("a huge attempt count = %v, want the cap", got)
	}
}

func TestBackoffJittersOverTheUpperHalfAndResets(t *testing.T) {
	b := &Backoff{Base: 200 * time.Millisecond, Max: 30 * time.Second, Jitter: true}
	for attempt := range 12 {
		full := Delay(b.Base, b.Max, attempt)
		if got := b.Next(); got < full/2 || got > full {
			t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, got, full/2, full)
		}
	}
	b.Reset()
	if got := b.Next(); got > b.Base {
		t.Errorf("after Reset: wait %v, want at most %v", got, b.Base)
	}
	plain := &Backoff{Base: 100, Max: 300}
	for _, w := range []time.Duration{100, 200, 300, 300} {
		if got := plain.Next(); got != w {
			t.Errorf("without jitter: %v, want %v", got, w)
		}
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Wait(ctx, time.Hour) {
		t.Error("Wait on an ended context reported a full wait")
	}
	if !Wait(context.Background(), time.Millisecond) {
		t.Error("Wait of 1ms did not report a full wait")
	}
}
