package externaldns

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// inProcess is an http.RoundTripper that hands each request to a handler
// in the same process: the protocol's shape without a socket, so no port
// is opened and no answer is ever lost between the two sides.
//
// A socket's request ends with its context; a call into a handler does
// not, so the round trip keeps that promise itself: a request whose
// context has ended is refused before the handler sees it (a write after
// a read that outlived the call's deadline, or after the lease was lost,
// is never sent), and the caller is answered when the context ends, the
// handler left to finish alone and its late answer dropped.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if err := ctx.Err(); err != nil {
		return nil, refused(ctx, r)
	}
	if r.Body == nil {
		r = r.Clone(ctx)
		r.Body = http.NoBody
	}
	answered := make(chan *http.Response, 1) // a dropped answer never blocks the handler
	go func() {
		rec := httptest.NewRecorder()
		t.h.ServeHTTP(rec, r)
		answered <- rec.Result()
	}()
	select {
	case resp := <-answered:
		if ctx.Err() != nil {
			return nil, refused(ctx, r) // answered too late: nobody may act on it
		}
		return resp, nil
	case <-ctx.Done():
		return nil, refused(ctx, r)
	}
}

// refused is the error of a request whose context ended, naming why.
func refused(ctx context.Context, r *http.Request) error {
	return fmt.Errorf("%s %s: in-process provider call cut off: %w", r.Method, r.URL.Path, context.Cause(ctx))
}
