package systemtest

import (
	"encoding/gob"
	"net"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// connectorEndpoint is ExternalDNS v0.23's endpoint.Endpoint as its
// connector servers gob-encode it (gob matches fields by name; the
// connector source's tests and the linked check in cmd/zonestream/cli
// hold it to ExternalDNS' own type).
type connectorEndpoint struct {
	DNSName          string
	Targets          []string
	RecordType       string
	SetIdentifier    string
	RecordTTL        int64
	Labels           map[string]string
	ProviderSpecific []struct{ Name, Value string }
}

// TestConnectorEndToEnd runs the all-in-one binary with the connector
// source, reading a TCP server this test starts that speaks ExternalDNS'
// connector protocol, against real BIND: the server's endpoints become
// records, with ownership TXT records naming the server.
func TestConnectorEndToEnd(t *testing.T) {
	const zone = "connector.test"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answer := []*connectorEndpoint{
		{DNSName: "app." + zone, Targets: []string{"192.0.2.40"}, RecordType: "A", RecordTTL: 300},
		{DNSName: "www." + zone, Targets: []string{"app." + zone}, RecordType: "CNAME"},
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = gob.NewEncoder(conn).Encode(answer)
			conn.Close()
		}
	})

	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	args := []string{"--kubeconfig=" + cluster.Kubeconfig,
		"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0", "--interval=2s",
		"--source=connector", "--connector-source-server=" + ln.Addr().String()}
	startProcess(t, "zonestream", append(args, rfc2136Flags(ns, zone, "conn")...)...)

	waitForRecords(t, ns, "app."+zone, dns.TypeA, []string{"192.0.2.40"})
	waitForRecords(t, ns, "www."+zone, dns.TypeCNAME, []string{"app." + zone + "."})
	waitForRecords(t, ns, "a-app."+zone, dns.TypeTXT,
		[]string{"heritage=external-dns,external-dns/owner=conn,external-dns/resource=connector//" + ln.Addr().String()})
}
