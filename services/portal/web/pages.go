package web

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// group is the names of one zone on the page.
type group struct {
	Zone   string
	Names  []projection.Summary
	Size   int // names in the zone, listed or not
	Counts map[projection.Status]int
}

// listData is what the list page shows.
type listData struct {
	Filter   projection.Filter
	Statuses []projection.Status
	Counts   map[projection.Status]int
	Total    int
	// Shown is how many names the page lists: at most the limit, so that
	// thousands of names still load fast; search and filters narrow them.
	Shown  int
	Limit  int
	Groups []group
	// Held are the zones' deletes the mass-delete guard holds.
	Held []projection.HeldRef
	// Providers are the providers of the zone lists, each with the names
	// that go to it.
	Providers []projection.ProviderView
	// Choices are the values the filters offer, from the names in view.
	projection.Choices
}

// pageLimit is how many names the page lists unless ?limit= says otherwise.
const pageLimit = 500

func (s *server) listPage(w http.ResponseWriter, r *http.Request) {
	f, err := filter(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	limit := pageLimit
	if l := r.URL.Query().Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 {
			http.Error(w, "limit: want a positive number", http.StatusBadRequest)
			return
		}
	}
	names, counts := s.proj.List(f)
	d := listData{Filter: f, Statuses: projection.Statuses, Counts: counts, Total: len(names), Limit: limit,
		Choices: s.proj.Choices(), Held: s.proj.Held(), Providers: s.proj.Providers()}
	for i, n := range names {
		if len(d.Groups) == 0 || d.Groups[len(d.Groups)-1].Zone != n.Zone {
			d.Groups = append(d.Groups, group{Zone: n.Zone, Counts: map[projection.Status]int{}})
		}
		g := &d.Groups[len(d.Groups)-1]
		g.Counts[n.Status]++
		g.Size++
		if i < limit {
			g.Names = append(g.Names, n)
			d.Shown++
		}
	}
	s.render(w, "list.html", d)
}

func (s *server) detailPage(w http.ResponseWriter, r *http.Request) {
	d, ok := s.detail(r)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
	}
	s.render(w, "detail.html", d)
}

func (s *server) render(w http.ResponseWriter, page string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages.ExecuteTemplate(w, page, data); err != nil {
		s.log.Error("rendering a page failed", "page", page, "err", err)
	}
}

var funcs = template.FuncMap{
	"slug": func(s projection.Status) string { return s.Slug() },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
	"object": func(o events.ObjectRef) string {
		return fmt.Sprintf("%s %s/%s in cluster %s", o.Source, o.Namespace, o.Name, o.Cluster)
	},
	"records": func(eps []events.Endpoint) []string {
		out := make([]string, 0, len(eps))
		for _, ep := range eps {
			r := ep.RecordType + " " + strings.Join(ep.Targets, " ")
			if ep.RecordTTL > 0 {
				r += " (ttl " + strconv.FormatInt(ep.RecordTTL, 10) + ")"
			}
			out = append(out, r)
		}
		return out
	},
	"change": func(c events.Change) string { return c.String() + targets(c) },
	"kind":   func(k history.Kind) string { return string(k) },
	"join":   strings.Join,
	"ms":     func(sec float64) string { return strconv.FormatFloat(sec*1000, 'f', 1, 64) + " ms" },
}

func targets(c events.Change) string {
	switch {
	case c.New != nil:
		return " → " + strings.Join(c.New.Targets, " ")
	case c.Old != nil:
		return " (" + strings.Join(c.Old.Targets, " ") + ")"
	}
	return ""
}
