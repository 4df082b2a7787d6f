package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider/providertest"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
	"github.com/zonestream/zonestream/testenv/bind"
)

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func memProvider(t *testing.T, zones ...string) *inmemory.Provider {
	t.Helper()
	p, err := inmemory.New(inmemory.Config{Zones: zones}, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder wraps a handler, keeps the POST bodies and lets a test answer
// in its place (hook returns true when it answered).
type recorder struct {
	next  http.Handler
	mu    sync.Mutex
	posts [][]byte
	gets  atomic.Int32
	hook  func(w http.ResponseWriter, r *http.Request, n int) bool
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == webhook.PathRecords {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.posts = append(rec.posts, body)
		n := len(rec.posts)
		hook := rec.hook
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if hook != nil && hook(w, r, n) {
			return
		}
	}
	if r.Method == http.MethodGet && r.URL.Path == webhook.PathRecords {
		rec.gets.Add(1)
	}
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) postCount() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.posts)
}

func (rec *recorder) lastPost(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.posts) == 0 {
		t.Fatal("no POST /records")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rec.posts[len(rec.posts)-1], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func serve(t *testing.T, p provider.Provider, opts webhook.ServerOptions) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{next: webhook.NewServer(p, opts)}
	s := httptest.NewServer(rec)
	t.Cleanup(s.Close)
	return s, rec
}

func client(t *testing.T, url string, zones ...string) *webhook.Provider {
	t.Helper()
	c, err := webhook.New(webhook.Config{
		URL: url, Zones: zones, ReadTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second,
		Retries: 3, RetryBackoff: 5 * time.Millisecond,
	}, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ep(name, typ string, targets ...string) *events.Endpoint {
	e := events.NewEndpoint(name, typ, 0, targets...)
	return &e
}

func records(t *testing.T, p provider.Provider, zone string) map[string][]string {
	t.Helper()
	eps, err := p.Records(ctx(t), zone)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range eps {
		out[e.DNSName+" "+e.RecordType] = e.Targets
	}
	return out
}

func TestNegotiation(t *testing.T) {
	mem := memProvider(t, "example.org", "sub.example.org")
	s, _ := serve(t, mem, webhook.ServerOptions{})

	req, _ := http.NewRequest(http.MethodGet, s.URL+"/", nil)
	req.Header.Set("Accept", webhook.MediaType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/external.dns.webhook+json;version=1" {
		t.Fatalf("negotiation: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := strings.TrimSpace(string(body)); got != `{"include":["example.org","sub.example.org"]}` {
		t.Fatalf("domain filter %s", got)
	}

	c := client(t, s.URL)
	zones, err := c.Zones(ctx(t))
	if err != nil || !slices.Equal(zones, []string{"example.org", "sub.example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	// --webhook-zone wins over the include list.
	if zones, err := client(t, s.URL, "sub.example.org").Zones(ctx(t)); err != nil || !slices.Equal(zones, []string{"sub.example.org"}) {
		t.Fatalf("zones with --webhook-zone %v %v", zones, err)
	}

	// A configured filter is negotiated as it is, and limits the server.
	s2, _ := serve(t, mem, webhook.ServerOptions{DomainFilter: webhook.DomainFilter{Include: []string{"example.org"}, Exclude: []string{"private.example.org"}}})
	f, err := client(t, s2.URL).DomainFilter(ctx(t))
	if err != nil || !slices.Equal(f.Include, []string{"example.org"}) || !slices.Equal(f.Exclude, []string{"private.example.org"}) {
		t.Fatalf("filter %+v %v", f, err)
	}
	if f.Match("a.private.example.org") || !f.Match("www.example.org") || f.Match("example.net") {
		t.Fatal("filter semantics")
	}
	err = client(t, s2.URL).Apply(ctx(t), "example.org", []events.Change{{New: ep("x.private.example.org", "A", "192.0.2.1")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("excluded name: %v", err)
	}

	// Media type and version are checked.
	for _, ct := range []string{"application/json", "application/external.dns.webhook+json;version=2", ""} {
		bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			_, _ = w.Write([]byte(`{"include":["example.org"]}`))
		}))
		_, err := client(t, bad.URL).Zones(ctx(t))
		bad.Close()
		if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "Content-Type") {
			t.Errorf("content type %q accepted: %v", ct, err)
		}
	}
	// Parameters are compared as MIME does.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/external.dns.webhook+json; version=1")
		_, _ = w.Write([]byte(`{"regexInclude":"example\\.org$"}`))
	}))
	defer ok.Close()
	if _, err := client(t, ok.URL).Zones(ctx(t)); !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "--webhook-zone") {
		t.Fatalf("regex filter without --webhook-zone: %v", err)
	}
	if zones, err := client(t, ok.URL, "example.org").Zones(ctx(t)); err != nil || zones[0] != "example.org" {
		t.Fatalf("regex filter with --webhook-zone: %v %v", zones, err)
	}
}

func TestCreateUpdateDelete(t *testing.T) {
	mem := memProvider(t, "example.org", "sub.example.org")
	s, rec := serve(t, mem, webhook.ServerOptions{})
	c := client(t, s.URL)
	if _, err := c.Zones(ctx(t)); err != nil {
		t.Fatal(err)
	}

	owned := ep("www.example.org", "A", "192.0.2.1")
	owned.Labels = map[string]string{"owner": "default"}
	owned.RecordTTL = 60
	err := c.Apply(ctx(t), "example.org", []events.Change{
		{New: owned},
		{New: ep("a-www.example.org", "TXT", "heritage=external-dns,external-dns/owner=default")},
		{New: ep("api.example.org", "CNAME", "LB.example.net.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	post := rec.lastPost(t)
	if _, ok := post["create"]; !ok || len(post) != 1 {
		t.Fatalf("POST body fields %v", post)
	}
	var created []map[string]any
	_ = json.Unmarshal(post["create"], &created)
	if len(created) != 3 || created[0]["dnsName"] != "www.example.org" || created[0]["recordType"] != "A" ||
		created[0]["recordTTL"] != float64(60) || created[1]["recordTTL"] != float64(300) {
		t.Fatalf("created %v", created)
	}
	if err := c.Apply(ctx(t), "sub.example.org", []events.Change{{New: ep("x.sub.example.org", "A", "192.0.2.9")}}); err != nil {
		t.Fatal(err)
	}

	got := records(t, c, "example.org")
	if len(got) != 3 || !slices.Equal(got["www.example.org A"], []string{"192.0.2.1"}) || !slices.Equal(got["api.example.org CNAME"], []string{"lb.example.net"}) {
		t.Fatalf("example.org lists %v", got)
	}
	if sub := records(t, c, "sub.example.org"); len(sub) != 1 || sub["x.sub.example.org A"] == nil {
		t.Fatalf("sub.example.org lists %v", sub)
	}
	if _, err := c.Records(ctx(t), "example.net"); !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("unknown zone: %v", err)
	}

	// Update: updateOld is the endpoint as listed (labels, TTL), updateNew
	// keeps its TTL and labels.
	err = c.Apply(ctx(t), "example.org", []events.Change{
		{Old: ep("www.example.org", "A", "192.0.2.1"), New: ep("www.example.org", "A", "192.0.2.2", "192.0.2.3")},
	})
	if err != nil {
		t.Fatal(err)
	}
	post = rec.lastPost(t)
	var olds, news []events.Endpoint
	_ = json.Unmarshal(post["updateOld"], &olds)
	_ = json.Unmarshal(post["updateNew"], &news)
	if len(olds) != 1 || olds[0].Labels["owner"] != "default" || olds[0].RecordTTL != 60 || !slices.Equal(olds[0].Targets, []string{"192.0.2.1"}) {
		t.Fatalf("updateOld %+v", olds)
	}
	if len(news) != 1 || news[0].RecordTTL != 60 || news[0].Labels["owner"] != "default" || len(news[0].Targets) != 2 {
		t.Fatalf("updateNew %+v", news)
	}
	if got := records(t, mem, "example.org"); !slices.Equal(got["www.example.org A"], []string{"192.0.2.2", "192.0.2.3"}) {
		t.Fatalf("after update %v", got)
	}

	// Delete, and a create then delete of one RRset in a batch (nothing sent for it).
	err = c.Apply(ctx(t), "example.org", []events.Change{
		{Old: ep("api.example.org", "CNAME", "lb.example.net")},
		{New: ep("tmp.example.org", "A", "192.0.2.4")},
		{Old: ep("tmp.example.org", "A", "192.0.2.4")},
	})
	if err != nil {
		t.Fatal(err)
	}
	post = rec.lastPost(t)
	var deleted []events.Endpoint
	_ = json.Unmarshal(post["delete"], &deleted)
	if len(post) != 1 || len(deleted) != 1 || deleted[0].DNSName != "api.example.org" {
		t.Fatalf("delete body %v", post)
	}
	if got := records(t, mem, "example.org"); len(got) != 2 || got["api.example.org CNAME"] != nil {
		t.Fatalf("after delete %v", got)
	}
}

func TestStale(t *testing.T) {
	mem := memProvider(t, "example.org")
	s, rec := serve(t, mem, webhook.ServerOptions{})
	c := client(t, s.URL)
	if err := c.Apply(ctx(t), "example.org", []events.Change{{New: ep("www.example.org", "A", "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	posts := rec.postCount()

	// Caught by the client's own check: nothing is sent.
	for name, ch := range map[string]events.Change{
		"create of an existing RRset": {New: ep("www.example.org", "A", "192.0.2.9")},
		"update from other targets":   {Old: ep("www.example.org", "A", "192.0.2.7"), New: ep("www.example.org", "A", "192.0.2.9")},
		"delete of an absent RRset":   {Old: ep("gone.example.org", "A", "192.0.2.7")},
	} {
		if err := c.Apply(ctx(t), "example.org", []events.Change{ch}); !errors.Is(err, provider.ErrStale) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if rec.postCount() != posts {
		t.Fatal("a stale batch was POSTed")
	}

	// Caught by the server: someone changes the record between the
	// client's check and its POST. The server answers 500, reason stale;
	// the client does not retry.
	rec.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		_ = mem.Apply(r.Context(), "example.org", []events.Change{{Old: ep("www.example.org", "A", "192.0.2.1"), New: ep("www.example.org", "A", "192.0.2.50")}})
		return false
	}
	err := c.Apply(ctx(t), "example.org", []events.Change{{Old: ep("www.example.org", "A", "192.0.2.1"), New: ep("www.example.org", "A", "192.0.2.2")}})
	if !errors.Is(err, provider.ErrStale) || errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("race: %v", err)
	}
	if rec.postCount() != posts+1 {
		t.Fatalf("stale answer retried: %d POSTs", rec.postCount()-posts)
	}
	if got := records(t, mem, "example.org"); !slices.Equal(got["www.example.org A"], []string{"192.0.2.50"}) {
		t.Fatalf("the other writer's change was overwritten: %v", got)
	}
}

func TestRetries(t *testing.T) {
	mem := memProvider(t, "example.org")
	s, rec := serve(t, mem, webhook.ServerOptions{})
	c := client(t, s.URL)

	// 500, then success: retried.
	rec.hook = func(w http.ResponseWriter, _ *http.Request, n int) bool {
		if n == 1 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return true
		}
		return false
	}
	if err := c.Apply(ctx(t), "example.org", []events.Change{{New: ep("www.example.org", "A", "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	if rec.postCount() != 2 {
		t.Fatalf("%d POSTs, want 2", rec.postCount())
	}
	if got := records(t, mem, "example.org"); !slices.Equal(got["www.example.org A"], []string{"192.0.2.1"}) {
		t.Fatalf("not applied: %v", got)
	}

	// Applied, but the answer is lost (503): the client sees the changes
	// in place and does not send them again.
	base := rec.postCount()
	rec.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == base+1 {
			rw := httptest.NewRecorder()
			rec.next.ServeHTTP(rw, r)
			http.Error(w, "lost", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	if err := c.Apply(ctx(t), "example.org", []events.Change{{New: ep("api.example.org", "A", "192.0.2.5")}}); err != nil {
		t.Fatal(err)
	}
	if rec.postCount() != base+1 {
		t.Fatalf("a POST applied behind a lost answer was sent again (%d POSTs)", rec.postCount()-base)
	}

	// 429 and 5xx forever: bounded, transient.
	base = rec.postCount()
	rec.hook = func(w http.ResponseWriter, _ *http.Request, n int) bool {
		code := http.StatusTooManyRequests
		if n%2 == 0 {
			code = http.StatusBadGateway
		}
		http.Error(w, "busy", code)
		return true
	}
	err := c.Apply(ctx(t), "example.org", []events.Change{{New: ep("x.example.org", "A", "192.0.2.6")}})
	if err == nil || errors.Is(err, provider.ErrPermanent) || errors.Is(err, provider.ErrStale) {
		t.Fatalf("endless 5xx: %v", err)
	}
	if n := rec.postCount() - base; n != 4 {
		t.Fatalf("%d POSTs, want 4 (1 + 3 retries)", n)
	}

	// 400: permanent, not retried.
	base = rec.postCount()
	rec.hook = func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		http.Error(w, `{"error":"bad record"}`, http.StatusBadRequest)
		return true
	}
	err = c.Apply(ctx(t), "example.org", []events.Change{{New: ep("y.example.org", "A", "192.0.2.7")}})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "bad record") {
		t.Fatalf("400: %v", err)
	}
	if rec.postCount()-base != 1 {
		t.Fatal("400 retried")
	}

	// A listing that fails with 500 is retried; a webhook that is not
	// there is a transient error.
	var fails atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == webhook.PathRecords && fails.Add(1) <= 2 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		rec.ServeHTTP(w, r)
	}))
	defer flaky.Close()
	if got := records(t, client(t, flaky.URL), "example.org"); len(got) != 2 {
		t.Fatalf("after retried listing: %v", got)
	}
	flaky.Close()
	if _, err := client(t, flaky.URL).Zones(ctx(t)); err == nil || errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("no webhook: %v", err)
	}
}

func do(t *testing.T, method, url, ctype, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// ExternalDNS' side of the protocol, as ExternalDNS sends it.
func TestServerProtocol(t *testing.T) {
	mem := memProvider(t, "example.org")
	s, _ := serve(t, mem, webhook.ServerOptions{})
	mt := webhook.MediaType

	code, h, body := do(t, "GET", s.URL+"/records", "", "")
	if code != 200 || h.Get("Content-Type") != mt || strings.TrimSpace(body) != "[]" {
		t.Fatalf("empty listing: %d %q %s", code, h.Get("Content-Type"), body)
	}
	// Field names as ExternalDNS 0.14+ writes them, and as older versions did.
	code, _, body = do(t, "POST", s.URL+"/records", mt,
		`{"create":[{"dnsName":"www.example.org","targets":["192.0.2.1"],"recordType":"A","recordTTL":120,"labels":{"owner":"x"}}]}`)
	if code != http.StatusNoContent {
		t.Fatalf("create: %d %s", code, body)
	}
	code, _, body = do(t, "POST", s.URL+"/records", mt,
		`{"Create":null,"UpdateOld":[{"dnsName":"www.example.org","targets":["192.0.2.1"],"recordType":"A"}],"UpdateNew":[{"dnsName":"www.example.org","targets":["192.0.2.2"],"recordType":"A","recordTTL":300}],"Delete":null}`)
	if code != http.StatusNoContent {
		t.Fatalf("update: %d %s", code, body)
	}
	code, _, body = do(t, "GET", s.URL+"/records", "", "")
	var eps []events.Endpoint
	if err := json.Unmarshal([]byte(body), &eps); err != nil || code != 200 || len(eps) != 1 || eps[0].Targets[0] != "192.0.2.2" || eps[0].RecordTTL != 300 {
		t.Fatalf("listing %d %s", code, body)
	}
	if !strings.Contains(body, `"dnsName":"www.example.org"`) || !strings.Contains(body, `"recordType":"A"`) || !strings.Contains(body, `"recordTTL":300`) {
		t.Fatalf("field names: %s", body)
	}

	// Stale (UpdateOld is not what is held): 500, reason stale, nothing changed.
	code, h, body = do(t, "POST", s.URL+"/records", mt,
		`{"updateOld":[{"dnsName":"www.example.org","targets":["192.0.2.1"],"recordType":"A"}],"updateNew":[{"dnsName":"www.example.org","targets":["192.0.2.3"],"recordType":"A"}]}`)
	if code != 500 || !strings.Contains(body, `"reason":"stale"`) || h.Get("Content-Type") != mt {
		t.Fatalf("stale: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, ctype, body string
		code              int
	}{
		{"not JSON", mt, "{", 400},
		{"update without its old half", mt, `{"updateNew":[{"dnsName":"www.example.org","targets":["192.0.2.3"],"recordType":"A"}]}`, 400},
		{"other media type", "text/plain", `{}`, 415},
		{"other version", "application/external.dns.webhook+json;version=2", `{}`, 415},
		{"out of every zone", mt, `{"create":[{"dnsName":"www.example.net","targets":["192.0.2.3"],"recordType":"A"}]}`, 500},
		{"no targets", mt, `{"create":[{"dnsName":"n.example.org","targets":[],"recordType":"A"}]}`, 500},
		{"nothing", mt, `{}`, 204},
	} {
		if code, _, body := do(t, "POST", s.URL+"/records", tc.ctype, tc.body); code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.code)
		}
	}
	if got := records(t, mem, "example.org"); len(got) != 1 || got["www.example.org A"][0] != "192.0.2.2" {
		t.Fatalf("failed requests changed records: %v", got)
	}

	in := `[{"dnsName":"a.example.org","targets":["192.0.2.1"],"recordType":"A","recordTTL":10}]`
	code, h, body = do(t, "POST", s.URL+"/adjustendpoints", mt, in)
	var adj []events.Endpoint
	if err := json.Unmarshal([]byte(body), &adj); err != nil || code != 200 || h.Get("Content-Type") != mt ||
		len(adj) != 1 || adj[0].DNSName != "a.example.org" || adj[0].RecordTTL != 10 || adj[0].Targets[0] != "192.0.2.1" {
		t.Fatalf("adjustendpoints: %d %s", code, body)
	}
	if code, _, _ := do(t, "PUT", s.URL+"/records", mt, "{}"); code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT /records: %d", code)
	}

	hs := httptest.NewServer(webhook.NewHealthHandler())
	defer hs.Close()
	if code, _, body := do(t, "GET", hs.URL+"/healthz", "", ""); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if code, _, _ := do(t, "GET", hs.URL+"/metrics", "", ""); code != 200 {
		t.Fatalf("metrics: %d", code)
	}
}

// The client against the server backed by a real BIND (rfc2136), checked
// with DNS queries.
func TestAgainstBIND(t *testing.T) {
	b := bind.StartT(t, "example.org")
	rp, err := rfc2136.New(rfc2136.Config{
		Host: b.Host, Port: b.Port, Zones: []string{"example.org"},
		TSIGKeyName: b.KeyName, TSIGSecret: b.Secret, TSIGSecretAlg: b.Algorithm, TSIGAXFR: true,
		BatchChangeSize: 50, RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
	}, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := serve(t, rp, webhook.ServerOptions{})
	c := client(t, s.URL)
	if zones, err := c.Zones(ctx(t)); err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	query := func(name string, qt uint16) []string { return providertest.Answers(t, b, name, qt) }

	if err := c.Apply(ctx(t), "example.org", []events.Change{{New: ep("www.example.org", "A", "192.0.2.1", "192.0.2.2")}}); err != nil {
		t.Fatal(err)
	}
	if got := query("www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1", "192.0.2.2"}) {
		t.Fatalf("BIND answers %v", got)
	}
	if got := records(t, c, "example.org"); !slices.Equal(got["www.example.org A"], []string{"192.0.2.1", "192.0.2.2"}) || got["ns.example.org A"] == nil {
		t.Fatalf("listing through the webhook %v", got)
	}
	if err := c.Apply(ctx(t), "example.org", []events.Change{{Old: ep("www.example.org", "A", "192.0.2.1", "192.0.2.2")}}); err != nil {
		t.Fatal(err)
	}
	if got := query("www.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("BIND still answers %v", got)
	}
}
