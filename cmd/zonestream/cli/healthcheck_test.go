package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthcheck: the containers' HEALTHCHECK passes only on a 200.
func TestHealthcheck(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := healthcheck([]string{"--url=" + srv.URL + "/readyz"}); err != nil {
		t.Fatalf("a ready process fails its healthcheck: %v", err)
	}
	ready = false
	if err := healthcheck([]string{"--url=" + srv.URL + "/readyz"}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a process that is not ready passes its healthcheck: %v", err)
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	if err := healthcheck([]string{"--url=http://" + addr + "/readyz"}); err == nil {
		t.Fatal("nothing listening passes the healthcheck")
	}
	if err := healthcheck([]string{"extra"}); err == nil {
		t.Fatal("a stray argument is accepted")
	}
}
