package cloudflare

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

type envelope struct {
	Success    bool              `json:"success"`
	Errors     []apiError        `json:"errors"`
	Result     json.RawMessage   `json:"result"`
	ResultInfo *resultInfo       `json:"result_info"`
	Messages   []json.RawMessage `json:"messages"`
}

func call(t *testing.T, s *Server, token, method, path, body string) (int, envelope) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+strings.TrimPrefix(path, "/"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return resp.StatusCode, env
}

// Without the token, with a wrong one, or writing with a read-only one,
// the answer is 403 in Cloudflare's error envelope, and nothing changes.
func TestTokenRequired(t *testing.T) {
	s := StartT(t, "example.org")
	zone := s.ZoneID("example.org")
	post := `{"name":"www.example.org","type":"A","content":"192.0.2.1","ttl":60}`
	for _, c := range []struct{ token, method, path, body string }{
		{"", "GET", "/zones", ""},
		{"wrong", "GET", "/zones", ""},
		{"wrong", "POST", "/zones/" + zone + "/dns_records", post},
		{s.ReadToken, "POST", "/zones/" + zone + "/dns_records", post},
		{s.ReadToken, "POST", "/zones/" + zone + "/dns_records/batch", `{"posts":[` + post + `]}`},
	} {
		code, env := call(t, s, c.token, c.method, c.path, c.body)
		if code != http.StatusForbidden || env.Success || len(env.Errors) != 1 || env.Errors[0].Code != 10000 ||
			string(env.Result) != "null" || env.Messages == nil {
			t.Errorf("%q %s %s: %d %+v", c.token, c.method, c.path, code, env)
		}
	}
	if code, _ := call(t, s, s.ReadToken, "GET", "/zones/"+zone+"/dns_records", ""); code != http.StatusOK {
		t.Errorf("read-only token listing: %d", code)
	}
	if got := s.Records("example.org"); len(got) != 0 {
		t.Fatalf("written: %+v", got)
	}
}

// Records are created, listed page by page, updated and deleted; the
// rules kept refuse what Cloudflare documents it refuses.
func TestRecords(t *testing.T) {
	s := StartT(t, "example.org", "example.net")
	zone := s.ZoneID("example.org")
	records := "/zones/" + zone + "/dns_records"
	for _, body := range []string{
		`{"name":"www.example.org","type":"A","content":"192.0.2.1","ttl":60,"proxied":true}`,
		`{"name":"WWW.example.org.","type":"A","content":"192.0.2.2","ttl":1}`,
		`{"name":"txt","type":"TXT","content":"\"v=1\"","ttl":300}`,
		`{"name":"alias.example.org","type":"CNAME","content":"www.example.org.","ttl":300}`,
	} {
		if code, env := call(t, s, s.Token, "POST", records, body); code != http.StatusOK || !env.Success {
			t.Fatalf("create %s: %d %+v", body, code, env)
		}
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"name":"www.example.org","type":"A","content":"192.0.2.1","ttl":60}`, 81058},
		{`{"name":"www.example.org","type":"CNAME","content":"x.example.net","ttl":60}`, 81053},
		{`{"name":"alias.example.org","type":"A","content":"192.0.2.9","ttl":60}`, 81053},
		{`{"name":"v6.example.org","type":"AAAA","content":"192.0.2.1","ttl":60}`, 9005},
		{`{"name":"a.example.org","type":"A","content":"192.0.2.1","ttl":30}`, 9021},
		{`{"name":"t.example.org","type":"TXT","content":"x","ttl":60,"proxied":true}`, 9004},
	} {
		if code, env := call(t, s, s.Token, "POST", records, c.body); code != http.StatusBadRequest || len(env.Errors) != 1 || env.Errors[0].Code != c.code {
			t.Errorf("%s: %d %+v, want error %d", c.body, code, env, c.code)
		}
	}
	got := s.Records("example.org")
	var lines []string
	for _, r := range got {
		lines = append(lines, r.Name+" "+r.Type+" "+r.Content)
	}
	want := []string{"alias.example.org CNAME www.example.org", "txt.example.org TXT \"v=1\"",
		"www.example.org A 192.0.2.1", "www.example.org A 192.0.2.2"}
	if !slices.Equal(lines, want) || !got[2].Proxied || got[3].Proxied || got[3].TTL != 1 {
		t.Fatalf("held %q %+v", lines, got)
	}
	if rrs, err := s.Query("www.example.org", 1); err != nil || len(rrs) != 2 || rrs[1].Header().Ttl != 300 {
		t.Fatalf("query %v %v", rrs, err)
	}

	// Pages of two, then an empty one, as cloudflare-go's auto-pager reads.
	var listed []string
	for p := 1; ; p++ {
		_, env := call(t, s, s.Token, "GET", records+"?per_page=2&page="+string(rune('0'+p)), "")
		var page []struct{ Name, Type, Content string }
		if err := json.Unmarshal(env.Result, &page); err != nil {
			t.Fatal(err)
		}
		if env.ResultInfo == nil || env.ResultInfo.TotalCount != 4 || env.ResultInfo.Page != p {
			t.Fatalf("page %d: %+v", p, env.ResultInfo)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			listed = append(listed, r.Name+" "+r.Type+" "+r.Content)
		}
	}
	if slices.Sort(listed); !slices.Equal(listed, want) {
		t.Fatalf("listed %q", listed)
	}

	// A batch fails as a whole: the delete before the refused post is
	// not kept.
	id := got[2].ID
	code, env := call(t, s, s.Token, "POST", records+"/batch",
		`{"deletes":[{"id":"`+id+`"}],"posts":[{"name":"alias.example.org","type":"A","content":"192.0.2.9","ttl":60}]}`)
	if code != http.StatusBadRequest || env.Errors[0].Code != 81053 || len(s.Records("example.org")) != 4 {
		t.Fatalf("failed batch: %d %+v, held %+v", code, env, s.Records("example.org"))
	}
	code, env = call(t, s, s.Token, "POST", records+"/batch",
		`{"deletes":[{"id":"`+got[3].ID+`"}],"puts":[{"id":"`+id+`","name":"www.example.org","type":"A","content":"192.0.2.3","ttl":120,"proxied":false}],`+
			`"posts":[{"name":"v6.example.org","type":"AAAA","content":"2001:db8:0::1","ttl":60}]}`)
	if code != http.StatusOK || !env.Success {
		t.Fatalf("batch: %d %+v", code, env)
	}
	lines = nil
	for _, r := range s.Records("example.org") {
		lines = append(lines, r.Name+" "+r.Type+" "+r.Content)
	}
	want = []string{"alias.example.org CNAME www.example.org", "txt.example.org TXT \"v=1\"",
		"v6.example.org AAAA 2001:db8::1", "www.example.org A 192.0.2.3"}
	if !slices.Equal(lines, want) {
		t.Fatalf("after batch %q", lines)
	}
	if code, _ := call(t, s, s.Token, "DELETE", records+"/"+id, ""); code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	if code, env := call(t, s, s.Token, "DELETE", records+"/"+id, ""); code != http.StatusNotFound || env.Errors[0].Code != 81044 {
		t.Fatalf("delete again: %d %+v", code, env)
	}
	if len(s.Records("example.net")) != 0 {
		t.Fatal("example.net written")
	}
}
