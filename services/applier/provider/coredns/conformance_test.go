package coredns_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/coredns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := corednsenv.StartT(t, "example.org", "example.net")
		return newProvider(t, s, func(c *coredns.Config) {
			if tune != nil {
				tune(&c.RetryConfig)
			}
		}), providertest.CoreDNS{Server: s}
	}, providertest.Options{
		// An ownership TXT beside the A would share its name's keys;
		// ExternalDNS' coredns users put it at a prefixed name.
		OwnerName: "a-www.example.org",
		// CoreDNS reads text in zone-file form: no backslashes.
		TXT:           []string{strings.Repeat("x", 300) + " and some words"},
		CNAMETarget:   "www.example.net",
		OutageTimeout: 500 * time.Millisecond,
		OutageLimit:   10 * time.Second,
		// The layout: one key per record, under an id below the name;
		// deleted records take their keys with them.
		AfterCreate: func(t *testing.T, ps providertest.Server) {
			s := ps.(providertest.CoreDNS)
			keys, err := s.Keys(s.Key("www.example.org", ""))
			if err != nil || len(keys) != 2 {
				t.Fatalf("keys of www: %v %v", keys, err)
			}
			for k, v := range keys {
				if !strings.HasPrefix(k, "/skydns/org/example/www/") || !strings.Contains(v, `"targetstrip":1`) || !strings.Contains(v, `"host":"192.0.2.`) {
					t.Fatalf("layout: %s = %s", k, v)
				}
			}
		},
		AfterDelete: func(t *testing.T, ps providertest.Server) {
			s := ps.(providertest.CoreDNS)
			if keys, _ := s.Keys(s.Key("www.example.org", "")); len(keys) != 0 {
				t.Fatalf("keys left: %v", keys)
			}
		},
	})
}
