package externaldns

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	edprovider "sigs.k8s.io/external-dns/provider"

	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// handler serves an ExternalDNS provider over ExternalDNS' webhook
// protocol, as ExternalDNS' webhook/api.WebhookServer does, except that
// each call runs under its request's context (theirs runs under
// context.Background(), so a cancelled or timed-out apply would go on
// writing), failures name themselves in the body the applier's webhook
// provider reads, and TXT targets are converted (txtTargets). When the
// provider's own domain filter lists nothing (every provider but those
// that list their hosted zones: AWS, Google, Azure, ...), the command
// line's is negotiated, so --domain-filter names the zones, as ExternalDNS
// users already give it.
type handler struct {
	p        edprovider.Provider
	fallback *endpoint.DomainFilter
	log      *slog.Logger
	txt      txtTargets
}

func newHandler(p edprovider.Provider, fallback *endpoint.DomainFilter, zoneText bool, log *slog.Logger) http.Handler {
	h := &handler{p: p, fallback: fallback, log: log}
	h.txt.zoneText = zoneText
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+webhook.PathNegotiate+"{$}", h.negotiate)
	mux.HandleFunc("GET "+webhook.PathRecords, h.records)
	mux.HandleFunc("POST "+webhook.PathRecords, h.apply)
	mux.HandleFunc("POST "+webhook.PathAdjustEndpoints, h.adjust)
	return mux
}

func (h *handler) negotiate(w http.ResponseWriter, r *http.Request) {
	f, err := h.domainFilter(r.Context())
	if err != nil {
		h.fail(w, "negotiate", err)
		return
	}
	if df, ok := f.(*endpoint.DomainFilter); !ok || df == nil || !df.IsConfigured() {
		f = h.fallback
	}
	h.answer(w, http.StatusOK, f)
}

func (h *handler) records(w http.ResponseWriter, r *http.Request) {
	eps, err := h.p.Records(r.Context())
	if err != nil {
		h.fail(w, "list records", err)
		return
	}
	h.answer(w, http.StatusOK, h.txt.fromProvider(eps))
}

func (h *handler) apply(w http.ResponseWriter, r *http.Request) {
	var ch plan.Changes
	if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
		h.reply(w, http.StatusBadRequest, webhook.ReasonBadInput, err)
		return
	}
	h.txt.toProvider(&ch)
	if err := h.p.ApplyChanges(r.Context(), &ch); err != nil {
		h.fail(w, "apply changes", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) adjust(w http.ResponseWriter, r *http.Request) {
	var eps []*endpoint.Endpoint
	if err := json.NewDecoder(r.Body).Decode(&eps); err != nil {
		h.reply(w, http.StatusBadRequest, webhook.ReasonBadInput, err)
		return
	}
	eps, err := h.p.AdjustEndpoints(eps)
	if err != nil {
		h.fail(w, "adjust endpoints", err)
		return
	}
	h.answer(w, http.StatusOK, eps)
}

// fail answers a provider's error. ExternalDNS retries every provider
// error at its next loop (a SoftError is only logged more quietly), so
// every one is transient here too: the applier retries the plan, and a
// throttled or unreachable cloud API fails no plan for good.
func (h *handler) fail(w http.ResponseWriter, what string, err error) {
	h.log.Warn("externaldns: provider failed", "call", what, "soft", errors.Is(err, edprovider.SoftError), "err", err)
	code := http.StatusInternalServerError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, edprovider.SoftError) {
		code = http.StatusServiceUnavailable
	}
	h.reply(w, code, webhook.ReasonTransient, err)
}

func (h *handler) reply(w http.ResponseWriter, code int, reason string, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}{err.Error(), reason})
}

func (h *handler) answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", webhook.MediaType)
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		h.log.Warn("externaldns: encoding an answer", "err", err)
	}
}
