package externaldns

import (
	"net/http"
	"net/http/httptest"
)

// inProcess is an http.RoundTripper that hands each request to a handler
// in the same process: the protocol's shape without a socket, so no port
// is opened and no answer is ever lost between the two sides.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r = r.Clone(r.Context())
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
