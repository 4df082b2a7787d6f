package web

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// List is the answer of GET /api/names.
type List struct {
	Total  int                       `json:"total"`
	Counts map[projection.Status]int `json:"counts"`
	Names  []projection.Summary      `json:"names"`
}

// Detail is the answer of GET /api/names/{name}.
type Detail struct {
	projection.View
	History []history.Entry `json:"history"`
	// HistoryError says why the history could not be read.
	HistoryError string `json:"historyError,omitempty"`
}

// filter reads the list filters from a query string. An unknown status
// is an error, never an empty list that looks like an answer.
func filter(q url.Values) (projection.Filter, error) {
	f := projection.Filter{Zone: q.Get("zone"), Cluster: q.Get("cluster"), Namespace: q.Get("namespace"),
		Source: q.Get("source"), Provider: q.Get("provider"), Text: q.Get("q")}
	if f.Text == "" {
		f.Text = q.Get("text")
	}
	if s := q.Get("status"); s != "" {
		st, ok := projection.ParseStatus(s)
		if !ok {
			return f, &badRequest{"unknown status " + s}
		}
		f.Status = st
	}
	return f, nil
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func (s *server) listAPI(w http.ResponseWriter, r *http.Request) {
	f, err := filter(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	names, counts := s.proj.List(f)
	writeJSON(w, List{Total: len(names), Counts: counts, Names: names})
}

func (s *server) detail(r *http.Request) (Detail, bool) {
	name := events.NormalizeName(r.PathValue("name"))
	v, ok := s.proj.Get(name)
	d := Detail{View: v}
	if !ok {
		d.Name = name
	}
	hist, err := s.history(r.Context(), name)
	if err != nil {
		s.log.Warn("reading a name's history failed", "name", name, "err", err)
		d.HistoryError = err.Error()
	}
	d.History = hist
	withRecords(&d.View, hist)
	return d, ok || len(hist) > 0
}

func (s *server) detailAPI(w http.ResponseWriter, r *http.Request) {
	d, ok := s.detail(r)
	if !ok {
		http.Error(w, "no such name: "+d.Name, http.StatusNotFound)
		return
	}
	writeJSON(w, d)
}

// Providers is the answer of GET /api/providers.
type Providers struct {
	Providers []projection.ProviderView `json:"providers"`
}

// providersAPI answers GET /api/providers: every provider of the zone
// lists, how it is declared, what it serves, and the names that go to it
// (listed by /api/names?provider=).
func (s *server) providersAPI(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, Providers{Providers: s.proj.Providers()})
}

// heldAPI answers GET /api/held: every zone's held deletes.
func (s *server) heldAPI(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.proj.Held()) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
