package portal_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/web"
)

// TestListAPI filters the list of names by each field, and follows a
// change live over server-sent events.
func TestListAPI(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone, "other.test"}}, "")
	api := events.ObjectRef{Cluster: "staging", Source: "ingress", Namespace: "api", Name: "gw"}
	for _, d := range []*events.DesiredState{
		desired("web."+zone, shopWeb, a("web."+zone, "192.0.2.1")),
		desired("api."+zone, api, a("api."+zone, "198.51.100.7")),
		desired("www.other.test", shopWeb, a("www.other.test", "192.0.2.1")),
	} {
		publish(t, js, events.DesiredSubject(d.DNSName), d, "")
	}
	waitFor(t, "three names", func() bool { return p.Projection().Len() == 3 })
	base := "http://" + p.Addr()
	// The zone list comes on another stream than the names: wait for it too.
	waitFor(t, "the zone list", func() bool {
		var l web.List
		getJSON(t, base+"/api/names?zone=other.test", &l)
		return l.Total == 1
	})

	cases := []struct {
		query string
		want  []string
	}{
		// By zone, then by name.
		{"", []string{"www.other.test", "api." + zone, "web." + zone}},
		{"zone=other.test", []string{"www.other.test"}},
		{"cluster=staging", []string{"api." + zone}},
		{"namespace=shop", []string{"www.other.test", "web." + zone}},
		{"source=ingress", []string{"api." + zone}},
		{"status=pending", []string{"www.other.test", "api." + zone, "web." + zone}},
		{"status=in-sync", nil},
		{"q=198.51", []string{"api." + zone}},
		{"q=WWW", []string{"www.other.test"}},
		{"q=shop/web", []string{"www.other.test", "web." + zone}},
	}
	for _, c := range cases {
		var l web.List
		getJSON(t, base+"/api/names?"+c.query, &l)
		var got []string
		for _, n := range l.Names {
			got = append(got, n.Name)
		}
		if !slices.Equal(got, c.want) || l.Total != len(c.want) {
			t.Errorf("?%s: %v (total %d), want %v", c.query, got, l.Total, c.want)
		}
	}
	resp, err := http.Get(base + "/api/names?status=fine")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown status: %s, want 400", resp.Status)
	}

	// Live: the provider now holds web's record; the event says so.
	req, _ := http.NewRequest("GET", base+"/api/events", nil)
	sse, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Body.Close()
	if ct := sse.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	name := "web." + zone
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.1")), "")
	lines := bufio.NewScanner(sse.Body)
	lines.Buffer(nil, 1<<20)
	deadline := time.AfterFunc(10*time.Second, func() { sse.Body.Close() })
	defer deadline.Stop()
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var u web.Update
		if err := json.Unmarshal([]byte(data), &u); err != nil {
			t.Fatal(err)
		}
		for _, n := range u.Names {
			if n.Name == name && n.Status == "in sync" {
				if u.Counts["in sync"] != 1 || u.Counts["pending"] != 2 {
					t.Fatalf("counts %v, want 1 in sync and 2 pending", u.Counts)
				}
				return
			}
		}
	}
	t.Fatal("no server-sent event said web is in sync")
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	if _, err := url.Parse(u); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestDetailReadsRecordsFromTheBus: the projection keeps only record sets
// per name; the detail reads the endpoints wanted and the records held,
// with their TTLs, from the bus: those of the states the view was made of.
func TestDetailReadsRecordsFromTheBus(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	name := "web." + zone
	publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.1")), "")
	wanted := a(name, "192.0.2.2", "192.0.2.3")
	wanted.RecordTTL = 60
	publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, wanted), "")
	held := a(name, "192.0.2.2")
	held.RecordTTL = 120
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, held, ownership(name, "default")), "")
	waitStatus(t, p, name, projection.Pending)
	waitFor(t, "the observed state in view", func() bool {
		v, _ := p.Projection().Get(name)
		return v.Observed["bind"] != nil && v.Desired != nil && len(v.Desired.Contributors) == 1
	})

	var d web.Detail
	getJSON(t, "http://"+p.Addr()+"/api/names/"+name, &d)
	if d.Desired == nil || len(d.Desired.Endpoints) != 1 || !slices.Equal(d.Desired.Endpoints[0].Targets, wanted.Targets) ||
		d.Desired.Endpoints[0].RecordTTL != 60 || d.Desired.Subject != events.DesiredSubject(name) {
		t.Errorf("desired %+v, want %v (ttl 60) on %s", d.Desired, wanted.Targets, events.DesiredSubject(name))
	}
	o := d.Observed["bind"]
	if o == nil || len(o.Records) != 2 || !slices.ContainsFunc(o.Records, func(r events.Endpoint) bool {
		return r.RecordType == events.RecordTypeA && r.RecordTTL == 120
	}) || o.Subject != events.ObservedSubject("bind", name) {
		t.Errorf("observed %+v, want A 192.0.2.2 (ttl 120) and its ownership record on %s", o, events.ObservedSubject("bind", name))
	}
	if v, _ := p.Projection().Get(name); v.Desired.Endpoints != nil || v.Observed["bind"].Records != nil {
		t.Errorf("the projection's own copy carries records: the detail read them from the bus, not from it")
	}
}
