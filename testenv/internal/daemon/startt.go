package daemon

import (
	"context"
	"testing"
	"time"
)

// StartT runs start (bounded by a minute) for the test, failing it on an
// error, and stops the server it started when the test ends; what names
// the server in the log of a failed stop.
func StartT[S interface{ Stop() error }](t testing.TB, what string, start func(ctx context.Context) (S, error)) S {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Logf("stop %s: %v", what, err)
		}
	})
	return s
}
