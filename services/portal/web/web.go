// Package web serves the portal: the page (server-rendered HTML, a little
// JavaScript for live updates), the JSON API and server-sent events.
package web

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"

	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// HistoryFunc reads the history of one name.
type HistoryFunc func(ctx context.Context, name string) ([]history.Entry, error)

// server holds what the handlers share.
type server struct {
	proj    *projection.Projection
	history HistoryFunc
	log     *slog.Logger
	pages   *template.Template
	events  *broker
}

// New returns the portal's handler. Its live updates stop with ctx.
func New(ctx context.Context, proj *projection.Projection, hist HistoryFunc, logger *slog.Logger) http.Handler {
	s := &server{proj: proj, history: hist, log: logger, events: newBroker(proj),
		pages: template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))}
	go s.events.run(ctx)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.listPage)
	mux.HandleFunc("GET /names/{name}", s.detailPage)
	mux.HandleFunc("GET /api/names", s.listAPI)
	mux.HandleFunc("GET /api/names/{name}", s.detailAPI)
	mux.HandleFunc("GET /api/held", s.heldAPI)
	mux.HandleFunc("GET /api/providers", s.providersAPI)
	mux.HandleFunc("GET /api/events", s.events.serve)
	mux.Handle("GET /static/", http.FileServerFS(staticFS))
	return mux
}
