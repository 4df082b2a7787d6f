package applier_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A collector writes a result's error into Kubernetes Events and status,
// and the portal and `zonestream explain` show it: they read it from the
// bus only, so what is asserted of the bus here covers them.

// syncBuffer is a log output written from the applier's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// capturedLogger logs everything, down to debug, into the buffer it returns.
func capturedLogger() (*slog.Logger, *syncBuffer) {
	out := &syncBuffer{}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})), out
}

// busText is every message of every stream on the bus: subject, headers
// and data.
func busText(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s %v %s\n", name, m.Subject, m.Header, m.Data)
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// assertNoSecret fails the test for every secret text holds.
func assertNoSecret(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %q:\n%s", where, s, text)
		}
	}
}

// echoingServer answers every request h does not take with 500 and a
// body that echoes the request: its URL, its Authorization and X-API-Key
// headers and the extra text given, as some servers' (or proxies') error
// pages do.
func echoingServer(h http.Handler, take func(*http.Request) bool, extra string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if take(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":"cannot serve %s %s (Authorization: %s, X-API-Key: %s) %s"}`,
			r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-API-Key"), extra)
	}))
}

// basicAuth is what an HTTP client sends for user and password.
func basicAuth(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
