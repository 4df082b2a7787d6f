package pdns_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// behindProxy serves PowerDNS' API through a proxy that calls edit once,
// right after it has answered the first read of a plan's names (a GET
// with rrset_name) or of the zone: another writer's edit landing between
// the provider's check and its PATCH.
func behindProxy(t *testing.T, s *pdnsenv.Server, edit func()) *pdnsenv.Server {
	t.Helper()
	target, err := url.Parse(s.APIURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.ServeHTTP(w, r)
		if r.Method == http.MethodGet && r.URL.Query().Get("rrsets") != "false" && r.URL.Path != "/api/v1/servers/"+pdnsenv.ServerID+"/zones" {
			once.Do(edit)
		}
	}))
	t.Cleanup(srv.Close)
	proxied := *s
	proxied.APIURL = srv.URL
	return &proxied
}

// TestEditBetweenCheckAndPatchIsNotOverwritten: PowerDNS' API has no
// conditional write, so the provider takes the zone's serial as the
// condition: an edit by anyone else after the plan's records were read
// moves it, and the plan is stale, nothing written, the edit kept. This
// is the window in which two appliers (or an applier and an operator)
// overwrote each other.
func TestEditBetweenCheckAndPatchIsNotOverwritten(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	if err := s.Plant(zone, "web.example.org", "A", 300, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*pdns.Config){
		"names read one by one": nil,
		"zone read whole":       func(c *pdns.Config) { c.FullListingEvery = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			if err := s.Plant(zone, "web.example.org", "A", 300, "192.0.2.1"); err != nil {
				t.Fatal(err)
			}
			proxied := behindProxy(t, s, func() {
				if err := s.Plant(zone, "web.example.org", "A", 300, "192.0.2.99"); err != nil {
					t.Error(err)
				}
			})
			p := newProvider(t, proxied, mod)
			plan := []events.Change{{Old: ep("web.example.org", "A", 300, "192.0.2.1"), New: ep("web.example.org", "A", 300, "192.0.2.2")}}
			if mod != nil {
				// More names than are read one by one: the zone is read.
				more, _ := bigPlan(zone, 70, "", "192.0.2.3")
				plan = append(plan, more...)
			}
			err := p.Apply(t.Context(), zone, plan)
			if !errors.Is(err, provider.ErrStale) {
				t.Errorf("Apply over an edit made after its check: %v, want ErrStale", err)
			}
			if got := providertest.Answers(t, s, "web.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.99"}) {
				t.Fatalf("web A holds %v: the edit made after the check was overwritten", got)
			}
		})
	}
}
