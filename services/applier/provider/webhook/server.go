package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// ServerOptions configure NewServer.
type ServerOptions struct {
	// DomainFilter is negotiated (GET /) and limits what the server lists
	// and changes. With no include list and no regular expression, the
	// server negotiates the provider's zones as its include list.
	DomainFilter DomainFilter
	Logger       *slog.Logger
	// MaxBodySize bounds a request body (ExternalDNS sends a whole plan at
	// once): larger is a 413. 0: DefaultMaxBodySize; negative: no bound.
	MaxBodySize int64
}

type server struct {
	p       provider.Provider
	filter  DomainFilter
	log     *slog.Logger
	maxBody int64
}

// body is r's body within the server's bound.
func (s *server) body(w http.ResponseWriter, r *http.Request) io.Reader {
	if s.maxBody < 0 {
		return r.Body
	}
	return http.MaxBytesReader(w, r.Body, s.maxBody)
}

// decodeFailed answers a body that could not be decoded: 413 when it was
// over the bound, 400 otherwise.
func (s *server) decodeFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		s.fail(w, r, http.StatusRequestEntityTooLarge, ReasonBadInput, fmt.Errorf("%s: the body is larger than %d bytes", what, tooLarge.Limit))
		return
	}
	s.fail(w, r, http.StatusBadRequest, ReasonBadInput, fmt.Errorf("decoding %s: %w", what, err))
}

// NewServer serves p over ExternalDNS' webhook protocol:
//
//	GET  /                 200, the domain filter, Content-Type MediaType
//	GET  /records          200, every RRset of every zone of p ([]Endpoint)
//	POST /records          Changes: 204 applied; 400 undecodable; 415 other
//	                       media type; 500 with reason "rejected" (p refused
//	                       a record: permanent) or "stale" (a precondition
//	                       failed); 503 p failed (transient)
//
// A rejected record is a 500, not a 4xx, because ExternalDNS exits on any
// answer below 500: one bad record would crash-loop it. The reason tells
// clients that read it (ours does) not to retry.
//
//	POST /adjustendpoints  200, the endpoints unchanged
//
// Error answers carry {"error": "...", "reason": "..."}. The changes are
// grouped per zone (the longest zone of p that a name falls in) and
// applied with p.Apply, each zone's changes in one batch, in the order
// deletes, updates, creates; Old is taken from Delete and UpdateOld, so p
// checks that the records are still what the client saw. p is called
// through provider.Checked.
func NewServer(p provider.Provider, opts ServerOptions) http.Handler {
	s := &server{p: provider.Checked(p), filter: opts.DomainFilter, log: opts.Logger, maxBody: opts.MaxBodySize}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBodySize
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	_ = s.filter.compile()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.negotiate)
	mux.HandleFunc("GET "+PathRecords, s.records)
	mux.HandleFunc("POST "+PathRecords, s.applyChanges)
	mux.HandleFunc("POST "+PathAdjustEndpoints, s.adjustEndpoints)
	return mux
}

// NewHealthHandler serves /healthz (200 "ok" while the process runs) and
// /metrics (Prometheus), the endpoints an ExternalDNS webhook provider
// exposes on its second port.
func NewHealthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", promhttp.Handler())
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", MediaType)
	w.Header().Set("Vary", "Accept")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *server) fail(w http.ResponseWriter, r *http.Request, code int, reason string, err error) {
	lvl := slog.LevelWarn
	if code >= 500 && reason != ReasonStale && reason != ReasonRejected {
		lvl = slog.LevelError
	}
	s.log.Log(r.Context(), lvl, "webhook: request failed", "method", r.Method, "path", r.URL.Path, "status", code, "reason", reason, "err", err)
	writeJSON(w, code, errorBody{Error: err.Error(), Reason: reason})
}

func (s *server) negotiate(w http.ResponseWriter, r *http.Request) {
	f := s.filter
	if len(f.Include) == 0 && f.RegexInclude == "" && f.RegexExclude == "" {
		zones, err := s.p.Zones(r.Context())
		if err != nil {
			s.fail(w, r, http.StatusServiceUnavailable, ReasonTransient, err)
			return
		}
		f.Include = zones
	}
	writeJSON(w, http.StatusOK, &f)
}

func (s *server) records(w http.ResponseWriter, r *http.Request) {
	zones, err := s.p.Zones(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, ReasonTransient, err)
		return
	}
	out := []events.Endpoint{}
	seen := map[events.RRsetKey]bool{}
	for _, z := range zones {
		eps, err := s.p.Records(r.Context(), z)
		if err != nil {
			s.fail(w, r, http.StatusInternalServerError, ReasonTransient, fmt.Errorf("list zone %s: %w", z, err))
			return
		}
		for _, ep := range eps {
			k := provider.KeyOf(ep)
			// A parent zone's listing may hold a child zone's delegation:
			// each name is reported by its own (longest) zone only.
			if seen[k] || provider.ZoneOf(k.DNSName, zones) != events.NormalizeName(z) || !s.filter.Match(k.DNSName) {
				continue
			}
			seen[k] = true
			out = append(out, ep)
		}
	}
	events.SortEndpoints(out)
	writeJSON(w, http.StatusOK, out)
}

// mediaTypeOK accepts a request body declared as the protocol's media type
// (version 1), as JSON, or not declared.
func mediaTypeOK(header string) bool {
	if header == "" {
		return true
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == mediaTypeName && (params["version"] == "" || params["version"] == mediaTypeVersion)
}

func (s *server) applyChanges(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !mediaTypeOK(ct) {
		s.fail(w, r, http.StatusUnsupportedMediaType, ReasonBadInput, fmt.Errorf("Content-Type %q: want %s", ct, MediaType))
		return
	}
	var ch Changes
	if err := json.NewDecoder(s.body(w, r)).Decode(&ch); err != nil {
		s.decodeFailed(w, r, "changes", err)
		return
	}
	changes, err := ToChanges(ch)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, ReasonBadInput, err)
		return
	}
	if len(changes) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	zones, err := s.p.Zones(r.Context())
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, ReasonTransient, err)
		return
	}
	perZone := map[string][]events.Change{}
	for _, c := range changes {
		name := events.NormalizeName(c.Key().DNSName)
		z := provider.ZoneOf(name, zones)
		if z == "" {
			s.fail(w, r, http.StatusInternalServerError, ReasonRejected, fmt.Errorf("change %s: %s is in none of the zones %v", c, name, zones))
			return
		}
		if !s.filter.Match(name) {
			s.fail(w, r, http.StatusInternalServerError, ReasonRejected, fmt.Errorf("change %s: %s is outside the domain filter", c, name))
			return
		}
		perZone[z] = append(perZone[z], c)
	}
	order := make([]string, 0, len(perZone))
	for z := range perZone {
		order = append(order, z)
	}
	slices.Sort(order)
	var done []string
	for _, z := range order {
		if err := s.p.Apply(r.Context(), z, perZone[z]); err != nil {
			if len(done) > 0 {
				err = fmt.Errorf("zone %s: %w (zones %s were applied)", z, err, strings.Join(done, ", "))
			} else {
				err = fmt.Errorf("zone %s: %w", z, err)
			}
			switch {
			case errors.Is(err, provider.ErrStale):
				// 5xx, as ExternalDNS' own server answers a failed apply:
				// ExternalDNS retries only 500-510 (a soft error) and
				// exits on anything else, and a stale plan is healed by
				// listing again and re-planning.
				s.fail(w, r, http.StatusInternalServerError, ReasonStale, err)
			case errors.Is(err, provider.ErrPermanent):
				s.fail(w, r, http.StatusInternalServerError, ReasonRejected, err)
			default:
				s.fail(w, r, http.StatusServiceUnavailable, ReasonTransient, err)
			}
			return
		}
		done = append(done, z)
		s.log.Info("webhook: applied changes", "zone", z, "changes", len(perZone[z]))
	}
	w.WriteHeader(http.StatusNoContent)
}

// ToChanges maps ExternalDNS' Changes onto zonestream changes, in the
// order deletes, updates, creates (a CNAME replaced by an A at one name
// is deleted before the A is created): Delete -> {Old}, UpdateOld and
// UpdateNew paired by name, type and set identifier -> {Old, New}, Create
// -> {New}. An update without its other half is an error.
func ToChanges(ch Changes) ([]events.Change, error) {
	if len(ch.UpdateOld) != len(ch.UpdateNew) {
		return nil, fmt.Errorf("%d updateOld but %d updateNew endpoints", len(ch.UpdateOld), len(ch.UpdateNew))
	}
	out := make([]events.Change, 0, len(ch.Create)+len(ch.UpdateNew)+len(ch.Delete))
	for i := range ch.Delete {
		out = append(out, events.Change{Old: &ch.Delete[i]})
	}
	olds := pairing(ch.UpdateOld)
	for i := range ch.UpdateNew {
		j := olds.take(i, provider.KeyOf(ch.UpdateNew[i]))
		if j < 0 {
			return nil, fmt.Errorf("updateNew %s %s has no updateOld", ch.UpdateNew[i].DNSName, ch.UpdateNew[i].RecordType)
		}
		out = append(out, events.Change{Old: &ch.UpdateOld[j], New: &ch.UpdateNew[i]})
	}
	for i := range ch.Create {
		out = append(out, events.Change{New: &ch.Create[i]})
	}
	return out, nil
}

func (s *server) adjustEndpoints(w http.ResponseWriter, r *http.Request) {
	eps := []events.Endpoint{}
	if err := json.NewDecoder(s.body(w, r)).Decode(&eps); err != nil {
		s.decodeFailed(w, r, "endpoints", err)
		return
	}
	if eps == nil {
		eps = []events.Endpoint{}
	}
	writeJSON(w, http.StatusOK, eps)
}
