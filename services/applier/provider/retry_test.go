package provider

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetry(t *testing.T) {
	transient := errors.New("timeout")
	for _, tc := range []struct {
		name     string
		fails    []error // what each attempt returns, then nil
		retries  int
		attempts int
		want     error
	}{
		{"success first time", nil, 3, 1, nil},
		{"transient then success", []error{transient, transient}, 3, 3, nil},
		{"transient until given up", []error{transient, transient, transient}, 2, 3, transient},
		{"permanent is not retried", []error{Permanent(errors.New("REFUSED"))}, 3, 1, ErrPermanent},
		{"stale is not retried", []error{ErrStale}, 3, 1, ErrStale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := Retry(context.Background(), tc.retries, time.Millisecond, nil, func() error {
				n++
				if n <= len(tc.fails) {
					return tc.fails[n-1]
				}
				return nil
			})
			if n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	err := Retry(ctx, 5, time.Hour, nil, func() error { n++; return transient })
	if n != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context must stop the retries: %d attempts, %v", n, err)
	}
}
