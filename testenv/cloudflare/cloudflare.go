// Package cloudflare is a fake of the part of Cloudflare's HTTP API v4
// that ExternalDNS' cloudflare provider (v0.21.0 through cloudflare-go v5,
// v0.23.0 through v7) calls: list zones, get a zone, list DNS records,
// create, update and delete one, and the batch of deletes, puts and posts the provider sends
// first. It is written from Cloudflare's API documentation and
// cloudflare-go's request and response types. It is not Cloudflare, and
// agreeing with it proves only that a client speaks the API as documented:
// Cloudflare's own validation, normalisation and limits are richer than
// the few rules kept here (see api.go).
//
// It serves on 127.0.0.1 only, keeps everything in memory, and requires
// an API token ("Authorization: Bearer ..."): a wrong or missing one is
// answered 403 with Cloudflare's error envelope, and a read-only token may
// list but not write. Point cloudflare-go v5 at it with
// CLOUDFLARE_BASE_URL=URL, which its NewClient reads.
package cloudflare

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Record is a DNS record as the fake holds it, in the API's terms.
type Record struct {
	ID       string
	Zone     string // the zone's name
	Name     string // fully qualified, no trailing dot, lower case
	Type     string
	Content  string
	TTL      int // 1 is "automatic"
	Proxied  bool
	Priority float64 // MX only
	Comment  string
	Tags     []string
	Created  time.Time
	Modified time.Time
}

type zone struct {
	id, name string
	created  time.Time
	records  []Record // in creation order
}

// Server is a running fake.
type Server struct {
	// URL is the API's base URL, as cloudflare-go takes it
	// (http://127.0.0.1:port/client/v4/).
	URL string
	// Token may read and write; ReadToken may only read.
	Token, ReadToken string

	srv *httptest.Server

	mu       sync.Mutex
	zones    []*zone
	requests []string
}

// Start serves zones (names, e.g. "example.org") on a free loopback port.
func Start(zones ...string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Token: newID(), ReadToken: newID()}
	for _, name := range zones {
		s.zones = append(s.zones, &zone{id: newID(), name: canonical(name), created: time.Now().UTC()})
	}
	s.srv = httptest.NewUnstartedServer(http.StripPrefix("/client/v4", http.HandlerFunc(s.serve)))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL + "/client/v4/"
	return s, nil
}

// StartT starts the fake for the test and stops it at the end.
func StartT(t testing.TB, zones ...string) *Server {
	t.Helper()
	s, err := Start(zones...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Stop takes the server down; calls to it then fail to connect.
func (s *Server) Stop() error {
	s.srv.CloseClientConnections()
	s.srv.Close()
	return nil
}

// ZoneID is the id of the zone named name, "" if there is none.
func (s *Server) ZoneID(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z := s.zoneByName(canonical(name)); z != nil {
		return z.id
	}
	return ""
}

// Records is what zone holds, sorted by name, type and content.
func (s *Server) Records(zoneName string) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneByName(canonical(zoneName))
	if z == nil {
		return nil
	}
	out := slices.Clone(z.records)
	slices.SortFunc(out, func(a, b Record) int {
		return strings.Compare(a.Name+" "+a.Type+" "+a.Content, b.Name+" "+b.Type+" "+b.Content)
	})
	return out
}

// Requests are the requests served so far, as "METHOD /path?query"
// (the path without /client/v4).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Set replaces name's records of type typ with one per content, behind
// the client's back, as someone using the dashboard would.
func (s *Server) Set(name, typ string, ttl int, contents ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	name = canonical(name)
	z := s.zoneOf(name)
	if z == nil {
		return fmt.Errorf("cloudflare fake: no zone holds %s", name)
	}
	z.records = slices.DeleteFunc(z.records, func(r Record) bool { return r.Name == name && r.Type == typ })
	now := time.Now().UTC()
	for _, c := range contents {
		z.records = append(z.records, Record{ID: newID(), Zone: z.name, Name: name, Type: typ,
			Content: c, TTL: ttl, Created: now, Modified: now})
	}
	return nil
}

// Remove deletes name's records of type typ behind the client's back.
func (s *Server) Remove(name, typ string) error { return s.Set(name, typ, 0) }

// Query answers name/qtype from what the fake holds, as a DNS server
// would (an automatic TTL is 300 s), for checks written in DNS terms.
// Cloudflare's proxying is not modelled: a proxied record answers its
// own content.
func (s *Server) Query(name string, qtype uint16) ([]dns.RR, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name = canonical(name)
	typ := dns.TypeToString[qtype]
	z := s.zoneOf(name)
	if z == nil {
		return nil, nil
	}
	var out []dns.RR
	for _, r := range z.records {
		if r.Name != name || r.Type != typ {
			continue
		}
		ttl, content := r.TTL, r.Content
		if ttl == 1 {
			ttl = 300
		}
		if r.Type == "MX" {
			content = fmt.Sprintf("%d %s.", int(r.Priority), content)
		} else if r.Type == "CNAME" || r.Type == "NS" {
			content += "."
		}
		rr, err := dns.NewRR(fmt.Sprintf("%s. %d IN %s %s", r.Name, ttl, r.Type, content))
		if err != nil {
			return nil, fmt.Errorf("cloudflare fake: %s %s %q: %w", r.Name, r.Type, r.Content, err)
		}
		out = append(out, rr)
	}
	return out, nil
}

func (s *Server) zoneByName(name string) *zone {
	for _, z := range s.zones {
		if z.name == name {
			return z
		}
	}
	return nil
}

func (s *Server) zoneByID(id string) *zone {
	for _, z := range s.zones {
		if z.id == id {
			return z
		}
	}
	return nil
}

// zoneOf is the zone name belongs to, the longest match.
func (s *Server) zoneOf(name string) *zone {
	var best *zone
	for _, z := range s.zones {
		if inZone(name, z.name) && (best == nil || len(z.name) > len(best.name)) {
			best = z
		}
	}
	return best
}

func inZone(name, zone string) bool { return name == zone || strings.HasSuffix(name, "."+zone) }

// canonical is a name as the API returns it: lower case, no trailing dot.
func canonical(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// newID is a 32-hex-digit identifier, the shape of Cloudflare's.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
