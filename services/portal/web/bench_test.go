package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/projection/projectiontest"
	"github.com/zonestream/zonestream/services/portal/web"
)

// BenchmarkListPage10k loads the page listing 10,000 names, over HTTP:
// the server's side of a page load (rendering and transfer on loopback).
func BenchmarkListPage10k(b *testing.B) {
	const names = 10000
	p := projection.New(projection.Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "default"}})
	projectiontest.Fill(p, names)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	noHistory := func(context.Context, string) ([]history.Entry, error) { return nil, nil }
	srv := httptest.NewServer(web.New(ctx, p, noHistory, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	var size int64
	for b.Loop() {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			b.Fatal(err)
		}
		size, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /: %s, %v", resp.Status, err)
		}
	}
	b.ReportMetric(float64(size), "bytes/page")
}
