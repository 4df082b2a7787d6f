package planner

import (
	"maps"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// externalDNSZone is a zone as ExternalDNS, owner x, left it, in one of its
// formats: the records, and what the sources want (the same).
type externalDNSZone struct {
	name    string
	reg     txtRegistry // the flags it ran with (owner aside)
	records []events.Endpoint
}

func externalDNSZones(t *testing.T) []externalDNSZone {
	n := func(s string) string { return s + "." + zone }
	x := owned("x", "service/default/web")
	key, _ := registry.ParseAESKey("ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY=")
	enc := func(plain string, nonce byte) string {
		s, err := registry.Encrypt(plain, key, slices.Repeat([]byte{nonce}, 12)) // ExternalDNS: a random nonce
		if err != nil {
			t.Fatal(err)
		}
		return `"` + s + `"` // quoted, as ExternalDNS' endpoint holds it
	}
	return []externalDNSZone{
		{name: "old format (before 0.12)", records: []events.Endpoint{
			rr(n("old"), "A", 300, "192.0.2.1"), rr(n("old"), "TXT", 300, x),
		}},
		{name: "old and new format (0.12 to 0.14)", records: []events.Endpoint{
			rr(n("dual"), "A", 300, "192.0.2.1"), rr(n("dual"), "TXT", 300, x), rr(n("a-dual"), "TXT", 300, x),
			rr(n("v6"), "AAAA", 300, "2001:db8::1"), rr(n("aaaa-v6"), "TXT", 300, x),
			rr(n("ds"), "A", 300, "192.0.2.2"), rr(n("ds"), "AAAA", 300, "2001:db8::2"), rr(n("ds"), "TXT", 300, x),
			rr(n("a-ds"), "TXT", 300, x), rr(n("aaaa-ds"), "TXT", 300, x),
		}},
		{name: "new format only", records: []events.Endpoint{
			rr(n("cn"), "CNAME", 300, "lb.example.net"), rr(n("cname-cn"), "TXT", 300, x),
			rr(n("*"), "A", 300, "192.0.2.3"), rr(n("a-*"), "TXT", 300, x),
		}},
		{name: "prefixed, old and new", reg: txtRegistry{names: registry.NewNames("txt.", "", "")}, records: []events.Endpoint{
			rr(n("p"), "A", 300, "192.0.2.1"), rr(n("txt.p"), "TXT", 300, x), rr(n("txt.a-p"), "TXT", 300, x),
			rr(n("pc"), "CNAME", 300, "lb.example.net"), rr(n("txt.pc"), "TXT", 300, x), rr(n("txt.cname-pc"), "TXT", 300, x),
		}},
		{name: "prefixed with %{record_type}, wildcard replaced", reg: txtRegistry{names: registry.NewNames("%{record_type}.", "", "wild")}, records: []events.Endpoint{
			rr(n("p"), "A", 300, "192.0.2.1"), rr(n("a.p"), "TXT", 300, x),
			rr(n("*.w"), "CNAME", 300, "lb.example.net"), rr(n("cname.wild.w"), "TXT", 300, x),
		}},
		{name: "suffixed", reg: txtRegistry{names: registry.NewNames("", "-reg", "")}, records: []events.Endpoint{
			rr(n("s"), "A", 300, "192.0.2.1"), rr(n("s-reg"), "TXT", 300, x), rr(n("a-s-reg"), "TXT", 300, x),
			rr(n("sc.deep"), "CNAME", 300, "lb.example.net"), rr(n("cname-sc-reg.deep"), "TXT", 300, x),
		}},
		{name: "suffixed with %{record_type}", reg: txtRegistry{names: registry.NewNames("", ".%{record_type}", "")}, records: []events.Endpoint{
			rr(n("s"), "A", 300, "192.0.2.1"), rr(n("s.a"), "TXT", 300, x),
		}},
		{name: "encrypted", reg: txtRegistry{aesKey: key, encrypt: true}, records: []events.Endpoint{
			rr(n("e"), "A", 300, "192.0.2.1"), rr(n("a-e"), "TXT", 300, enc(x, 1)),
			rr(n("e6"), "AAAA", 300, "2001:db8::1"), rr(n("aaaa-e6"), "TXT", 300, enc(x, 2)),
			rr(n("ec"), "CNAME", 300, "lb.example.net"), rr(n("cname-ec"), "TXT", 300, enc(x, 3)),
		}},
	}
}

type fakeZone map[events.RRsetKey]events.Endpoint

func newFakeZone(records []events.Endpoint) fakeZone {
	z := fakeZone{}
	for _, r := range records {
		z[r.Key()] = r
	}
	return z
}

func (z fakeZone) at(name string) []events.Endpoint {
	var out []events.Endpoint
	for _, k := range slices.SortedFunc(maps.Keys(z), func(a, b events.RRsetKey) int {
		return compareStrings(a.DNSName+" "+a.RecordType, b.DNSName+" "+b.RecordType)
	}) {
		if k.DNSName == name {
			out = append(out, z[k])
		}
	}
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// planZone plans every data name of the zone with desired = what is there.
func planZone(z fakeZone, reg *txtRegistry, desired func(name string) []events.Endpoint) []events.Change {
	names := map[string]bool{}
	for k := range z {
		if k.RecordType != events.RecordTypeTXT {
			names[k.DNSName] = true
		}
	}
	var all []events.Change
	for _, name := range slices.Sorted(maps.Keys(names)) {
		np := planName(nameInput{name: name, zone: zone, desired: desired(name), resource: "service/default/web",
			observed: z.at, policy: PolicySync, reg: reg})
		all = append(all, np.changes...)
	}
	return all
}

func dataOf(z fakeZone) func(string) []events.Endpoint {
	return func(name string) []events.Endpoint {
		var out []events.Endpoint
		for _, r := range z.at(name) {
			if r.RecordType != events.RecordTypeTXT {
				out = append(out, r)
			}
		}
		return out
	}
}

func TestExternalDNSZonesForOwnerX(t *testing.T) {
	for _, ez := range externalDNSZones(t) {
		t.Run(ez.name, func(t *testing.T) {
			z := newFakeZone(ez.records)

			// The same owner and flags: nothing to do.
			r := ez.reg
			r.OwnerID = "x"
			if cs := planZone(z, testRegistry(r), dataOf(z)); len(cs) > 0 {
				t.Errorf("--txt-owner-id=x planned:\n%s", describe(cs))
			}

			// Another owner: nothing touched, whatever is wanted.
			r.OwnerID = "y"
			other := func(name string) []events.Endpoint {
				var out []events.Endpoint
				for _, r := range dataOf(z)(name) {
					target := map[string]string{"A": "198.51.100.7", "AAAA": "2001:db8::7", "CNAME": "other.example.net"}[r.RecordType]
					out = append(out, rr(name, r.RecordType, 0, target))
				}
				return out
			}
			for what, desired := range map[string]func(string) []events.Endpoint{
				"same": dataOf(z), "different": other, "nothing": func(string) []events.Endpoint { return nil },
			} {
				if cs := planZone(z, testRegistry(r), desired); len(cs) > 0 {
					t.Errorf("--txt-owner-id=y, desired %s, planned:\n%s", what, describe(cs))
				}
			}

			// Adopting x: every name taken over, no record deleted.
			r.adopt = []string{"x"}
			reg := testRegistry(r)
			cs := planZone(z, reg, dataOf(z))
			if len(cs) == 0 {
				t.Fatal("--txt-adopt-owner=x planned nothing")
			}
			for _, c := range cs {
				if c.New == nil {
					t.Errorf("adoption deletes %s %s", c.Key().DNSName, c.Key().RecordType)
				}
				if c.Key().RecordType != events.RecordTypeTXT {
					t.Errorf("adoption changes data: %s", describe([]events.Change{c}))
				}
			}
			for _, c := range cs {
				z[c.New.Key()] = *c.New
			}
			// Taken over: y now owns every record, x nothing, and
			// planning again changes nothing.
			if cs := planZone(z, reg, dataOf(z)); len(cs) > 0 {
				t.Errorf("after adoption, planned again:\n%s", describe(cs))
			}
			r.adopt = nil
			for k := range z {
				if k.RecordType == events.RecordTypeTXT {
					continue
				}
				for _, t2 := range []string{"A", "AAAA", "CNAME"} {
					if k.RecordType != t2 {
						continue
					}
					ownX := ownsAny(z, testRegistry(txtRegistry{Settings: registry.Settings{OwnerID: "x"}, names: r.names, aesKey: r.aesKey}), k)
					ownY := ownsAny(z, testRegistry(txtRegistry{Settings: registry.Settings{OwnerID: "y"}, names: r.names, aesKey: r.aesKey}), k)
					if ownX || !ownY {
						t.Errorf("%s %s: owned by x %v, by y %v", k.DNSName, k.RecordType, ownX, ownY)
					}
				}
			}
		})
	}
}

// ownsAny reports whether reg's owner would delete the record k if it were
// no longer wanted.
func ownsAny(z fakeZone, reg *txtRegistry, k events.RRsetKey) bool {
	np := planName(nameInput{name: k.DNSName, zone: zone, observed: z.at, policy: PolicySync, reg: reg})
	for _, c := range np.changes {
		if c.New == nil && c.Key() == k {
			return true
		}
	}
	return false
}
