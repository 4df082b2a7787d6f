package pdns

// The HTTP API, as an operator (or the harness) uses it to set up zones
// and plant records beside zonestream.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// RRset is an RRset as the PowerDNS API writes it in a PATCH.
type RRset struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	TTL        int      `json:"ttl,omitempty"`
	ChangeType string   `json:"changetype,omitempty"` // REPLACE or DELETE
	Records    []Record `json:"records"`
}

// Record is one record of an RRset: its content in PowerDNS' presentation
// form (TXT quoted, names with a trailing dot).
type Record struct {
	Content  string `json:"content"`
	Disabled bool   `json:"disabled"`
}

// ZoneID is the API's id of a zone. The harness' zones are plain names,
// whose id is the absolute name; the provider's pdns.ZoneID also escapes
// the characters PowerDNS writes as =XX.
func ZoneID(zone string) string { return dns.Fqdn(strings.TrimSuffix(strings.TrimSpace(zone), ".")) }

func (s *Server) createZone(ctx context.Context, zone string) error {
	fq := dns.Fqdn(zone)
	body := map[string]any{
		"name": fq,
		"kind": "Native",
		"rrsets": []RRset{
			{Name: fq, Type: "SOA", TTL: 300, Records: []Record{{Content: fmt.Sprintf("ns.%[1]s hostmaster.%[1]s 1 3600 600 86400 300", fq)}}},
			{Name: fq, Type: "NS", TTL: 300, Records: []Record{{Content: "ns." + fq}}},
			{Name: "ns." + fq, Type: "A", TTL: 300, Records: []Record{{Content: "127.0.0.1"}}},
		},
	}
	if err := s.api(ctx, http.MethodPost, "/zones", body, nil); err != nil {
		return fmt.Errorf("pdns: create zone %s: %w", zone, err)
	}
	return nil
}

// Patch sends one PATCH of rrsets to zone through the API, as an operator
// (or another tool) would: for tests that plant or remove records behind
// zonestream's back. A missing ChangeType is REPLACE.
func (s *Server) Patch(zone string, rrsets ...RRset) error {
	for i := range rrsets {
		if rrsets[i].ChangeType == "" {
			rrsets[i].ChangeType = "REPLACE"
		}
		rrsets[i].Name = dns.Fqdn(rrsets[i].Name)
		if rrsets[i].Records == nil {
			rrsets[i].Records = []Record{}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.api(ctx, http.MethodPatch, "/zones/"+url.PathEscape(ZoneID(zone)), map[string]any{"rrsets": rrsets}, nil)
}

// Plant replaces the RRset name/rtype of zone with the given contents
// (PowerDNS presentation form: TXT quoted, names with a trailing dot).
func (s *Server) Plant(zone, name, rtype string, ttl int, contents ...string) error {
	rs := RRset{Name: name, Type: rtype, TTL: ttl}
	for _, c := range contents {
		rs.Records = append(rs.Records, Record{Content: c})
	}
	return s.Patch(zone, rs)
}

// Remove deletes the RRset name/rtype of zone.
func (s *Server) Remove(zone, name, rtype string) error {
	return s.Patch(zone, RRset{Name: name, Type: rtype, ChangeType: "DELETE"})
}

// SetSOAEditAPI sets how the API raises zone's serial on each edit
// (DEFAULT, INCREASE, EPOCH, ...); "" leaves the serial alone, as a zone
// created with pdnsutil does.
func (s *Server) SetSOAEditAPI(zone, mode string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.api(ctx, http.MethodPut, "/zones/"+url.PathEscape(ZoneID(zone)), map[string]any{"soa_edit_api": mode}, nil)
}

// api sends one request to /api/v1/servers/localhost<path> with the API
// key and decodes a JSON answer into out (when not nil).
func (s *Server) api(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.APIURL+"/api/v1/servers/"+ServerID+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", s.APIKey)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
