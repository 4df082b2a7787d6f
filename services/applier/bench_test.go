package applier_test

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// Sizes of BenchmarkApply: the changes applied per iteration, the planner's
// default --batch-change-size, rfc2136's default --rfc2136-batch-change-size.
const (
	benchChanges  = 2000
	planSize      = 1000
	rfc2136Update = 50
)

// benchShapes are BenchmarkApply's cases: plans of the planner's default
// size, and a trickle of small plans (a busy cluster in steady state; fewer
// changes, the bare PowerDNS client being slow at small PATCHes), in an
// empty zone and in a zone of 10,000 records; and plans of the default size
// in a zone of 100,000 (whether the server slows down as BenchmarkScale's
// zone grows).
var benchShapes = []struct{ prefill, planSize, changes int }{
	{0, planSize, benchChanges}, {10000, planSize, benchChanges}, {100000, planSize, benchChanges},
	{0, 10, 200}, {10000, 10, 200},
}

// benchServer is a real DNS server with two zones of the same size, the
// applier configuration that drives one of them, and a bare client writing
// the same records to the other: neither sees the other's writes, as an
// applier that is its zone's only writer does not.
type benchServer struct {
	cfg applier.Config
	// bare creates the A records of eps in zone the simplest way the
	// server offers, in batches the size zonestream uses for plans of
	// planSize.
	bare func(zone string, eps []events.Endpoint, planSize int) error
}

// The zone the applier writes, and the bare client's.
const (
	benchZone = "bench.test"
	bareZone  = "bare.test"
)

var benchServers = []struct {
	name  string
	start func(b *testing.B) benchServer
}{
	{"rfc2136", func(b *testing.B) benchServer {
		s := bind.StartT(b, benchZone, bareZone)
		cfg := applier.Config{Provider: rfc2136.Name, Interval: time.Hour, DefaultTTL: 300,
			RFC2136: rfc2136.Config{Host: s.Host, Port: s.Port, Zones: []string{benchZone},
				TSIGKeyName: s.KeyName, TSIGSecret: s.Secret, TSIGSecretAlg: s.Algorithm, TSIGAXFR: true,
				BatchChangeSize: rfc2136Update}}
		// One TSIG-signed UPDATE over TCP per message zonestream would
		// send (50 records at most), no prerequisites.
		bare := func(zone string, eps []events.Endpoint, planSize int) error {
			size := min(planSize, rfc2136Update)
			for start := 0; start < len(eps); start += size {
				var rrs []dns.RR
				for _, ep := range eps[start:min(start+size, len(eps))] {
					rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Name: dns.Fqdn(ep.DNSName), Rrtype: dns.TypeA,
						Class: dns.ClassINET, Ttl: 300}, A: net.ParseIP(ep.Targets[0])})
				}
				if err := s.Update(zone, rrs, nil); err != nil {
					return err
				}
			}
			return nil
		}
		return benchServer{cfg, bare}
	}},
	{"pdns", func(b *testing.B) benchServer {
		s := pdnsenv.StartT(b, benchZone, bareZone)
		cfg := applier.Config{Provider: pdns.Name, Interval: time.Hour, DefaultTTL: 300,
			PDNS: pdns.Config{Server: s.APIURL, APIKey: s.APIKey, ServerID: pdnsenv.ServerID, FullListingEvery: 10}} // the flag's default
		// One PATCH of REPLACE rrsets per plan's worth of records.
		bare := func(zone string, eps []events.Endpoint, planSize int) error {
			for start := 0; start < len(eps); start += planSize {
				var rrsets []pdnsenv.RRset
				for _, ep := range eps[start:min(start+planSize, len(eps))] {
					rrsets = append(rrsets, pdnsenv.RRset{Name: ep.DNSName, Type: "A", TTL: 300,
						Records: []pdnsenv.Record{{Content: ep.Targets[0]}}})
				}
				if err := s.Patch(zone, rrsets...); err != nil {
					return err
				}
			}
			return nil
		}
		return benchServer{cfg, bare}
	}},
}

// BenchmarkApply creates 2000 (or 200) A records per iteration through the applier
// (plans as the planner sends them, each followed by the applier's
// read-back and publication of what changed) and the same number with a
// bare client in a zone of the same size on the same server, in batches of
// the same size. It
// reports both rates and their ratio (zonestream/bare).
func BenchmarkApply(b *testing.B) {
	for _, srv := range benchServers {
		for _, shape := range benchShapes {
			b.Run(fmt.Sprintf("%s/zone=%d/plan=%d", srv.name, shape.prefill, shape.planSize), func(b *testing.B) {
				benchApply(b, srv.start, shape.prefill, shape.planSize, shape.changes)
			})
		}
	}
}

func benchApply(b *testing.B, startServer func(*testing.B) benchServer, prefill, planSize, changes int) {
	const zone = benchZone
	s := startServer(b)
	for _, z := range []string{zone, bareZone} {
		if err := s.bare(z, benchRecords(z, "fill", prefill), 1000); err != nil {
			b.Fatal(err)
		}
	}
	nc, js := busConn(b)
	var failed atomic.Int64
	results := make(chan struct{}, 64)
	sub, err := nc.Subscribe(events.ResultSubject(s.cfg.Provider, zone), func(m *nats.Msg) {
		var r events.Result
		if err := events.Unmarshal(m.Header, m.Data, &r); err != nil || r.Status != events.ResultApplied {
			failed.Add(1)
		}
		results <- struct{}{}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	start(b, js, s.cfg)

	var zs, bare time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The plans as the planner puts them on the bus: the applier's
		// time starts when they are published.
		eps := benchRecords(zone, "zs"+strconv.Itoa(i), changes)
		var msgs []*nats.Msg
		for p := 0; p*planSize < len(eps); p++ {
			plan := &events.Plan{ID: fmt.Sprintf("bench-%d-%d", i, p), Provider: s.cfg.Provider, Zone: zone}
			for _, ep := range eps[p*planSize : min((p+1)*planSize, len(eps))] {
				plan.Changes = append(plan.Changes, events.Change{New: &ep})
			}
			msg, err := events.Message(events.PlanSubject(s.cfg.Provider, zone), plan, "")
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, msg)
		}
		t0 := time.Now()
		for _, msg := range msgs {
			if _, err := js.PublishMsg(b.Context(), msg); err != nil {
				b.Fatal(err)
			}
		}
		timeout := time.After(5 * time.Minute)
		for range msgs {
			select {
			case <-results:
			case <-timeout:
				b.Fatal("plans not applied after 5 minutes")
			}
		}
		zs += time.Since(t0)
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d plans not applied", n)
		}

		t0 = time.Now()
		if err := s.bare(bareZone, benchRecords(bareZone, "bare"+strconv.Itoa(i), changes), planSize); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(t0)
	}
	b.StopTimer()
	total := float64(b.N * changes)
	b.ReportMetric(total/zs.Seconds(), "zs-changes/s")
	b.ReportMetric(total/bare.Seconds(), "bare-changes/s")
	b.ReportMetric(bare.Seconds()/zs.Seconds(), "zs/bare")
}

// benchRecords are n A records named <prefix>-<i>.zone.
func benchRecords(zone, prefix string, n int) []events.Endpoint {
	eps := make([]events.Endpoint, n)
	for i := range eps {
		eps[i] = events.NewEndpoint(fmt.Sprintf("%s-%d.%s", prefix, i, zone), "A", 300,
			fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	return eps
}
