package cloudflare

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The API as the fake serves it, under /client/v4:
//
//	GET    /zones                              ?name= &page= &per_page= (default 20, at most 50)
//	GET    /zones/{zone_id}
//	GET    /zones/{zone_id}/dns_records        ?type= &name= &content= &page= &per_page= (default 100)
//	POST   /zones/{zone_id}/dns_records
//	GET    /zones/{zone_id}/dns_records/{id}
//	PUT    /zones/{zone_id}/dns_records/{id}   (the whole record; PATCH is not served)
//	DELETE /zones/{zone_id}/dns_records/{id}
//	POST   /zones/{zone_id}/dns_records/batch  {deletes, puts, posts}: in that order, all or nothing
//
// Every answer is the v4 envelope {success, errors, messages, result},
// with result_info on lists; a page past the last is empty, which is how
// cloudflare-go's auto-pager stops. The rules kept, each a 400 with an
// error code as Cloudflare's documentation and its users report them
// (ExternalDNS reads only the status; the codes were not checked against
// Cloudflare): an A's content is an IPv4 address and an AAAA's an IPv6
// one; a TTL is 1 (automatic) or 60 to 86400; only A, AAAA and CNAME may
// be proxied; a record identical to one held (name, type, content) is
// refused; a CNAME shares its name with no other record. Names are
// lower-cased, a name outside the zone is taken as relative to it ("@" is
// the apex), and a trailing dot is dropped from names and from CNAME, MX
// and NS targets; TXT content is kept as sent. Only A, AAAA, CNAME, TXT,
// MX and NS records are accepted. Not modelled: proxying itself (a
// proxied record's TTL is kept as sent), rate limits, accounts, limits on
// tags and comments, and every other part of the API (answered 404, code
// 7000).

// apiError is one entry of the envelope's errors.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// failure is an error answer: its HTTP status and the API's error.
type failure struct {
	status int
	apiError
}

func (f *failure) Error() string { return fmt.Sprintf("%d %d %s", f.status, f.Code, f.Message) }

func fail(status, code int, format string, args ...any) *failure {
	return &failure{status, apiError{code, fmt.Sprintf(format, args...)}}
}

var errAuth = fail(http.StatusForbidden, 10000, "Authentication error")

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case token == s.Token:
	case token == s.ReadToken && r.Method == http.MethodGet:
	default:
		writeError(w, errAuth)
		return
	}
	result, info, err := s.route(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body := map[string]any{"success": true, "errors": []apiError{}, "messages": []apiError{}, "result": result}
	if info != nil {
		body["result_info"] = info
	}
	writeJSON(w, http.StatusOK, body)
}

func writeError(w http.ResponseWriter, f *failure) {
	writeJSON(w, f.status, map[string]any{"success": false, "errors": []apiError{f.apiError},
		"messages": []apiError{}, "result": nil})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// route serves one request under the lock: its result, its result_info
// for a list, or its error.
func (s *Server) route(r *http.Request) (any, *resultInfo, *failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	noRoute := fail(http.StatusNotFound, 7000, "No route for that URI")
	if parts[0] != "zones" {
		return nil, nil, noRoute
	}
	if len(parts) == 1 {
		if r.Method != http.MethodGet {
			return nil, nil, noRoute
		}
		return s.listZones(r)
	}
	z := s.zoneByID(parts[1])
	if z == nil {
		return nil, nil, fail(http.StatusNotFound, 7003, "Could not route to %s, perhaps your object identifier is invalid?", r.URL.Path)
	}
	switch {
	case len(parts) == 2 && r.Method == http.MethodGet:
		return zoneJSON(z), nil, nil
	case len(parts) == 3 && parts[2] == "dns_records" && r.Method == http.MethodGet:
		return listRecords(z, r)
	case len(parts) == 3 && parts[2] == "dns_records" && r.Method == http.MethodPost:
		var b recordBody
		if err := decode(r, &b); err != nil {
			return nil, nil, err
		}
		rec, err := z.create(b)
		return recordJSON(rec), nil, err
	case len(parts) == 4 && parts[2] == "dns_records" && parts[3] == "batch" && r.Method == http.MethodPost:
		return batch(z, r)
	case len(parts) == 4 && parts[2] == "dns_records":
		return recordByID(z, r, parts[3])
	}
	return nil, nil, noRoute
}

// resultInfo is the paging of a list answer.
type resultInfo struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	Count      int `json:"count"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// page cuts items to the page the query asks for.
func page[T any](r *http.Request, items []T, perPageDefault, perPageMax int) ([]T, *resultInfo, *failure) {
	q := r.URL.Query()
	n, per := 1, perPageDefault
	if v := q.Get("page"); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 1 {
			return nil, nil, fail(http.StatusBadRequest, 1001, "Invalid page: %q", v)
		}
		n = int(p)
	}
	if v := q.Get("per_page"); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 1 || int(p) > perPageMax {
			return nil, nil, fail(http.StatusBadRequest, 1001, "Invalid per_page: %q", v)
		}
		per = int(p)
	}
	lo, hi := min((n-1)*per, len(items)), min(n*per, len(items))
	return items[lo:hi], &resultInfo{Page: n, PerPage: per, Count: hi - lo, TotalCount: len(items),
		TotalPages: int(math.Ceil(float64(len(items)) / float64(per)))}, nil
}

func (s *Server) listZones(r *http.Request) (any, *resultInfo, *failure) {
	var out []map[string]any
	for _, z := range s.zones {
		if name := r.URL.Query().Get("name"); name == "" || canonical(name) == z.name {
			out = append(out, zoneJSON(z))
		}
	}
	items, info, err := page(r, out, 20, 50)
	if items == nil {
		items = []map[string]any{}
	}
	return items, info, err
}

func zoneJSON(z *zone) map[string]any {
	return map[string]any{
		"id": z.id, "name": z.name, "status": "active", "paused": false, "type": "full",
		"development_mode": 0, "name_servers": []string{"ada.ns.cloudflare.com", "bob.ns.cloudflare.com"},
		"original_name_servers": nil, "original_registrar": nil, "original_dnshost": nil,
		"created_on": z.created, "modified_on": z.created, "activated_on": z.created,
		"account": map[string]any{"id": "0000000000000000000000000000000a", "name": "fake account"},
		"owner":   map[string]any{"id": nil, "type": "user", "email": nil},
		"meta":    map[string]any{"step": 4, "custom_certificate_quota": 0, "page_rule_quota": 3, "phishing_detected": false},
		"plan": map[string]any{"id": "0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "name": "Free Website", "price": 0,
			"currency": "USD", "frequency": "", "is_subscribed": false, "can_subscribe": false,
			"legacy_id": "free", "legacy_discount": false, "externally_managed": false},
		"permissions":         []string{"#dns_records:edit", "#dns_records:read", "#zone:read"},
		"vanity_name_servers": []string{},
	}
}

func listRecords(z *zone, r *http.Request) (any, *resultInfo, *failure) {
	q := r.URL.Query()
	match := func(key, v string) bool {
		want := q.Get(key)
		if want == "" {
			want = q.Get(key + ".exact")
		}
		return want == "" || (key == "name" && canonical(want) == v) || want == v
	}
	out := []map[string]any{}
	for _, rec := range z.records {
		if match("type", rec.Type) && match("name", rec.Name) && match("content", rec.Content) {
			out = append(out, recordJSON(rec))
		}
	}
	items, info, err := page(r, out, 100, 5000000)
	if items == nil {
		items = []map[string]any{}
	}
	return items, info, err
}

func recordJSON(rec Record) map[string]any {
	if rec.ID == "" {
		return nil
	}
	tags := rec.Tags
	if tags == nil {
		tags = []string{}
	}
	var comment any
	if rec.Comment != "" {
		comment = rec.Comment
	}
	out := map[string]any{
		"id": rec.ID, "name": rec.Name, "type": rec.Type,
		"content": rec.Content, "proxiable": proxiable[rec.Type], "proxied": rec.Proxied, "ttl": rec.TTL,
		"settings": map[string]any{}, "meta": map[string]any{}, "comment": comment, "tags": tags,
		"created_on": rec.Created, "modified_on": rec.Modified,
	}
	if rec.Type == "MX" {
		out["priority"] = rec.Priority
	}
	return out
}

func recordByID(z *zone, r *http.Request, id string) (any, *resultInfo, *failure) {
	i := slices.IndexFunc(z.records, func(rec Record) bool { return rec.ID == id })
	if i < 0 {
		return nil, nil, fail(http.StatusNotFound, 81044, "Record does not exist.")
	}
	switch r.Method {
	case http.MethodGet:
		return recordJSON(z.records[i]), nil, nil
	case http.MethodDelete:
		z.records = slices.Delete(z.records, i, i+1)
		return map[string]string{"id": id}, nil, nil
	case http.MethodPut:
		var b recordBody
		if err := decode(r, &b); err != nil {
			return nil, nil, err
		}
		rec, err := z.put(id, b)
		return recordJSON(rec), nil, err
	}
	return nil, nil, fail(http.StatusNotFound, 7000, "No route for that URI")
}

// batch runs deletes, then puts, then posts, on a copy of the zone's
// records, and keeps the copy only if every one succeeds.
func batch(z *zone, r *http.Request) (any, *resultInfo, *failure) {
	var b struct {
		Deletes []struct {
			ID string `json:"id"`
		} `json:"deletes"`
		Patches []json.RawMessage `json:"patches"`
		Puts    []recordBody      `json:"puts"`
		Posts   []recordBody      `json:"posts"`
	}
	if err := decode(r, &b); err != nil {
		return nil, nil, err
	}
	if len(b.Patches) > 0 {
		return nil, nil, fail(http.StatusBadRequest, 1004, "patches are not served by this fake")
	}
	work := &zone{id: z.id, name: z.name, records: slices.Clone(z.records)}
	res := map[string][]map[string]any{"deletes": {}, "patches": {}, "puts": {}, "posts": {}}
	for _, d := range b.Deletes {
		i := slices.IndexFunc(work.records, func(rec Record) bool { return rec.ID == d.ID })
		if i < 0 {
			return nil, nil, fail(http.StatusBadRequest, 81044, "Record does not exist.")
		}
		res["deletes"] = append(res["deletes"], recordJSON(work.records[i]))
		work.records = slices.Delete(work.records, i, i+1)
	}
	for _, p := range b.Puts {
		if p.ID == nil {
			return nil, nil, fail(http.StatusBadRequest, 1004, "DNS Validation Error: a put has no id")
		}
		rec, err := work.put(*p.ID, p)
		if err != nil {
			return nil, nil, err
		}
		res["puts"] = append(res["puts"], recordJSON(rec))
	}
	for _, p := range b.Posts {
		rec, err := work.create(p)
		if err != nil {
			return nil, nil, err
		}
		res["posts"] = append(res["posts"], recordJSON(rec))
	}
	z.records = work.records
	return res, nil, nil
}

func decode(r *http.Request, v any) *failure {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return fail(http.StatusBadRequest, 9207, "Request body is invalid: %v", err)
	}
	return nil
}

// recordBody is a record as clients send it (create, update, batch).
type recordBody struct {
	ID       *string  `json:"id"`
	Name     *string  `json:"name"`
	Type     *string  `json:"type"`
	Content  *string  `json:"content"`
	TTL      *float64 `json:"ttl"`
	Proxied  *bool    `json:"proxied"`
	Priority *float64 `json:"priority"`
	Comment  *string  `json:"comment"`
	Tags     []string `json:"tags"`
}

var proxiable = map[string]bool{"A": true, "AAAA": true, "CNAME": true}

// record checks b and makes it a record of z (no id, no times).
func (z *zone) record(b recordBody) (Record, *failure) {
	invalid := func(code int, format string, args ...any) (Record, *failure) {
		return Record{}, fail(http.StatusBadRequest, code, format, args...)
	}
	if b.Name == nil || *b.Name == "" || b.Type == nil || b.Content == nil {
		return invalid(1004, "DNS Validation Error: name, type and content are required")
	}
	rec := Record{Zone: z.name, Name: canonical(*b.Name), Type: *b.Type, Content: *b.Content, TTL: 1}
	if rec.Name == "@" {
		rec.Name = z.name
	} else if !inZone(rec.Name, z.name) {
		rec.Name += "." + z.name
	}
	switch rec.Type {
	case "A", "AAAA":
		ip, err := netip.ParseAddr(rec.Content)
		if err != nil || ip.Is4() != (rec.Type == "A") || ip.Zone() != "" {
			return invalid(9005, "Content for %s record is invalid.", rec.Type)
		}
		rec.Content = ip.String()
	case "CNAME", "MX", "NS":
		rec.Content = canonical(rec.Content)
	case "TXT":
	default:
		return invalid(1004, "DNS Validation Error: record type %q is not served by this fake", rec.Type)
	}
	if b.TTL != nil {
		rec.TTL = int(*b.TTL)
		if float64(rec.TTL) != *b.TTL || rec.TTL != 1 && (rec.TTL < 60 || rec.TTL > 86400) {
			return invalid(9021, "Invalid TTL. Must be between 60 and 86400 seconds, or 1 for Automatic.")
		}
	}
	if b.Proxied != nil {
		rec.Proxied = *b.Proxied
	}
	if rec.Proxied && !proxiable[rec.Type] {
		return invalid(9004, "This record type cannot be proxied.")
	}
	if rec.Type == "MX" {
		if b.Priority == nil {
			return invalid(1004, "DNS Validation Error: an MX record needs a priority")
		}
		rec.Priority = *b.Priority
	}
	if b.Comment != nil {
		rec.Comment = *b.Comment
	}
	rec.Tags = b.Tags
	return rec, nil
}

// conflict is why rec, replacing the record with id self (or none),
// cannot join z's records.
func (z *zone) conflict(rec Record, self string) *failure {
	for _, o := range z.records {
		if o.ID == self || o.Name != rec.Name {
			continue
		}
		if o.Type == rec.Type && o.Content == rec.Content {
			return fail(http.StatusBadRequest, 81058, "An identical record already exists.")
		}
		if o.Type == "CNAME" || rec.Type == "CNAME" {
			return fail(http.StatusBadRequest, 81053, "An A, AAAA, or CNAME record with that host already exists.")
		}
	}
	return nil
}

func (z *zone) create(b recordBody) (Record, *failure) {
	rec, err := z.record(b)
	if err != nil {
		return Record{}, err
	}
	if err := z.conflict(rec, ""); err != nil {
		return Record{}, err
	}
	rec.ID, rec.Created = newID(), time.Now().UTC()
	rec.Modified = rec.Created
	z.records = append(z.records, rec)
	return rec, nil
}

func (z *zone) put(id string, b recordBody) (Record, *failure) {
	i := slices.IndexFunc(z.records, func(rec Record) bool { return rec.ID == id })
	if i < 0 {
		return Record{}, fail(http.StatusNotFound, 81044, "Record does not exist.")
	}
	rec, err := z.record(b)
	if err != nil {
		return Record{}, err
	}
	if err := z.conflict(rec, id); err != nil {
		return Record{}, err
	}
	rec.ID, rec.Created, rec.Modified = id, z.records[i].Created, time.Now().UTC()
	z.records[i] = rec
	return rec, nil
}
