package connector_test

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

func connectorConfig(ns, server string) collector.Config {
	cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"connector"}}
	cfg.Connector.Server = server
	cfg.Connector.PollInterval = 50 * time.Millisecond
	cfg.Connector.ReadTimeout = 5 * time.Second
	return cfg
}

func subject(cluster, server string) string {
	return events.SourceSubject(cluster, "connector", "", server)
}

func withTTL(e events.Endpoint, ttl int64) events.Endpoint {
	e.RecordTTL = ttl
	return e
}

// ExternalDNS v0.23's testConnectorSourceEndpoints, case by case
// (source/connector_test.go), against a real TCP server speaking its gob
// protocol. Its "invalid remote server" case, an error there, is a state
// unknown here: nothing published, nothing taken back.
func TestConnectorExternalDNSCases(t *testing.T) {
	abc := &Endpoint{DNSName: "abc.example.org", Targets: Targets{"1.2.3.4"}, RecordType: "A", RecordTTL: 180}
	xyz := &Endpoint{DNSName: "xyz.example.org", Targets: Targets{"abc.example.org"}, RecordType: "CNAME", RecordTTL: 180}
	for _, tc := range []struct {
		name   string
		server bool
		answer []*Endpoint
		want   []events.Endpoint
	}{
		{name: "invalid remote server"},
		{name: "valid remote server with no endpoints", server: true},
		{name: "valid remote server", server: true, answer: []*Endpoint{abc},
			want: []events.Endpoint{withTTL(collectortest.EP("abc.example.org", "A", "1.2.3.4"), 180)}},
		{name: "valid remote server with multiple endpoints", server: true, answer: []*Endpoint{abc, xyz},
			want: []events.Endpoint{withTTL(collectortest.EP("abc.example.org", "A", "1.2.3.4"), 180),
				withTTL(collectortest.EP("xyz.example.org", "CNAME", "abc.example.org"), 180)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			addr := freeAddr(t)
			var srv *server
			if tc.server {
				srv = startServer(t, tc.answer...)
				addr = srv.addr()
			}
			collectortest.StartCollector(t, connectorConfig(ns, addr))
			if tc.want != nil {
				collectortest.WaitState(t, subject(ns, addr), tc.want)
				return
			}
			if srv != nil {
				srv.waitServed(t, 2) // answered, then asked again
			}
			if s, ok := collectortest.LastState(t, subject(ns, addr)); ok {
				t.Fatalf("published %s, want nothing", collectortest.Render(s.Endpoints))
			}
		})
	}
}

// The server's answer changing is published; endpoints of one RRset are
// merged; an answer that cannot be read keeps the last one (no deletes
// from a broken server); an empty answer takes the records back.
func TestConnectorLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	srv := startServer(t, &Endpoint{DNSName: "app.example.org", Targets: Targets{"192.0.2.1"}, RecordType: "A"})
	collectortest.StartCollector(t, connectorConfig(ns, srv.addr()))
	subj := subject(ns, srv.addr())
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1")})

	srv.set(&Endpoint{DNSName: "app.example.org", Targets: Targets{"192.0.2.1"}, RecordType: "A"},
		&Endpoint{DNSName: "app.example.org.", Targets: Targets{"192.0.2.2"}, RecordType: "A"},
		&Endpoint{DNSName: "txt.example.org", Targets: Targets{"hello"}, RecordType: "TXT", SetIdentifier: "eu",
			ProviderSpecific: ProviderSpecific{{Name: "aws/weight", Value: "10"}}, Labels: Labels{"owner": "someone"}})
	got := collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1", "192.0.2.2"),
		collectortest.EP("txt.example.org", "TXT", "hello")})
	for _, e := range got.Endpoints {
		if e.RecordType == "TXT" && (e.SetIdentifier != "eu" || len(e.ProviderSpecific) != 1 || e.ProviderSpecific[0].Value != "10") {
			t.Errorf("TXT endpoint lost its set identifier or properties: %+v", e)
		}
	}

	before := collectortest.Count(t, subj)
	srv.sendGarbage()
	srv.waitServed(t, 3)
	if n := collectortest.Count(t, subj); n != before {
		t.Fatalf("%d messages published while the server sent garbage, want none", n-before)
	}
	if s, ok := collectortest.LastState(t, subj); !ok || s.IsTombstone() {
		t.Fatalf("last state %v, want the last good answer kept", s)
	}

	srv.set()
	collectortest.WaitState(t, subj, nil)
}

// Invalid endpoints are skipped, counted and logged, and so is a second
// CNAME of one name (a CNAME has one target); the valid ones are
// published.
func TestConnectorInvalidEndpoints(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "connector", "InvalidEndpoint")
	srv := startServer(t,
		&Endpoint{DNSName: "bad..example.org", Targets: Targets{"192.0.2.1"}, RecordType: "A"},
		&Endpoint{DNSName: "v6.example.org", Targets: Targets{"192.0.2.1"}, RecordType: "AAAA"},
		&Endpoint{DNSName: "none.example.org", RecordType: "A"},
		&Endpoint{DNSName: "ok.example.org", Targets: Targets{"192.0.2.3"}, RecordType: "A"},
		&Endpoint{DNSName: "www.example.org", Targets: Targets{"ok.example.org"}, RecordType: "CNAME"},
		&Endpoint{DNSName: "www.example.org", Targets: Targets{"other.example.org"}, RecordType: "CNAME"})
	collectortest.StartCollector(t, connectorConfig(ns, srv.addr()))
	collectortest.WaitState(t, subject(ns, srv.addr()), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.3"),
		collectortest.EP("www.example.org", "CNAME", "ok.example.org")})
	if got := collectortest.InvalidInput(t, "connector", "InvalidEndpoint") - before; got < 4 {
		t.Errorf("InvalidEndpoint metric grew by %v, want >= 4", got)
	}
}

// A server address that is no host:port is refused at start.
func TestConnectorBadServerFlag(t *testing.T) {
	cfg := connectorConfig("bad-flag", "no-port")
	cfg.RESTConfig = collectortest.Cluster.Config
	if _, err := collector.New(cfg, collectortest.Logger(t)); err == nil {
		t.Fatal("no error for --connector-source-server=no-port")
	}
}
