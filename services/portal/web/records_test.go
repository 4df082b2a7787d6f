package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/projection/projectiontest"
	"github.com/zonestream/zonestream/services/portal/web"
)

// TestDetailRecords: the detail's endpoints and records are those of the
// history entries of the view's sequences, not older ones; without a
// history (the bus cannot be read), the view's record sets, without TTLs,
// rather than nothing.
func TestDetailRecords(t *testing.T) {
	p := projection.New(projection.Options{Grace: time.Minute, Ownership: registry.Settings{OwnerID: "default"}})
	projectiontest.Fill(p, 1)
	name := "svc-0." + projectiontest.Zones[0]
	v, ok := p.Get(name)
	if !ok || v.Desired == nil || v.Observed["bind"] == nil {
		t.Fatalf("no view of %s: %+v", name, v)
	}
	entry := func(seq uint64, ev events.Event) history.Entry { return history.Entry{Seq: seq, Event: ev} }
	at := func(target string, ttl int64) []events.Endpoint {
		return []events.Endpoint{events.NewEndpoint(name, events.RecordTypeA, ttl, target)}
	}
	hist := []history.Entry{ // newest first, as history.Read sorts them
		entry(v.Desired.Seq+100, &events.DesiredState{DNSName: name, Endpoints: at("192.0.2.9", 9)}),
		entry(v.Desired.Seq, &events.DesiredState{DNSName: name, Endpoints: at("10.0.0.0", 60)}),
		entry(v.Desired.Seq-1, &events.DesiredState{DNSName: name, Endpoints: at("192.0.2.1", 1)}),
		entry(v.Observed["bind"].Seq, &events.ObservedState{Provider: "bind", DNSName: name, Records: at("10.0.0.0", 120)}),
	}
	for _, c := range []struct {
		what                    string
		hist                    []history.Entry
		err                     error
		desiredTTL, observedTTL int64
	}{
		{"the history", hist, nil, 60, 120},
		{"no history", nil, errors.New("bus down"), 0, 0},
	} {
		t.Run(c.what, func(t *testing.T) {
			read := func(context.Context, string) ([]history.Entry, error) { return c.hist, c.err }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := httptest.NewServer(web.New(ctx, p, read, slog.New(slog.NewTextHandler(io.Discard, nil))))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/api/names/" + name)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var d web.Detail
			if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
				t.Fatal(err)
			}
			want := func(what string, eps []events.Endpoint, ttl int64) {
				t.Helper()
				if len(eps) != 1 || eps[0].RecordType != events.RecordTypeA || len(eps[0].Targets) != 1 ||
					eps[0].Targets[0] != "10.0.0.0" || eps[0].RecordTTL != ttl {
					t.Errorf("%s: %+v, want A 10.0.0.0 with TTL %d", what, eps, ttl)
				}
			}
			want("wanted", d.Desired.Endpoints, c.desiredTTL)
			want("held", d.Observed["bind"].Records, c.observedTTL)
		})
	}
}
