package planner

import (
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

func planWith(reg *txtRegistry, policy Policy, name string, desired, observed []events.Endpoint) namePlan {
	byName := map[string][]events.Endpoint{}
	for _, ep := range observed {
		byName[ep.DNSName] = append(byName[ep.DNSName], ep)
	}
	return planName(nameInput{name: name, zone: zone, desired: desired, resource: "service/default/web",
		observed: func(n string) []events.Endpoint { return byName[n] }, policy: policy, reg: reg})
}

func TestPlanNameRegistryRules(t *testing.T) {
	www := "www." + zone
	res := "service/default/web"
	fields := func(owner string, types ...string) string {
		return registry.Labels{Owner: owner, Types: types}.Format()
	}
	cases := []struct {
		name     string
		reg      txtRegistry
		policy   Policy
		desired  []events.Endpoint
		observed []events.Endpoint
		want     string
	}{
		{
			name:    "--txt-prefix: ownership written at the prefixed name",
			reg:     txtRegistry{names: registry.NewNames("txt.", "", "")},
			desired: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			want:    "create TXT txt.a-www " + owned("me", res) + "\ncreate A www 192.0.2.1",
		},
		{
			name:    "an alias A is owned as the CNAME it stands for, as ExternalDNS names it",
			desired: []events.Endpoint{aliasOf(rr(www, "A", 0, "lb.elb.example")), aliasOf(rr(www, "AAAA", 0, "lb.elb.example"))},
			want: "create TXT aaaa-www " + owned("me", res) + "\ncreate TXT cname-www " + owned("me", res) +
				"\ncreate A www lb.elb.example\ncreate AAAA www lb.elb.example",
		},
		{
			name:    "an alias A and its cname- ownership, as ExternalDNS wrote them, are left as they are",
			desired: []events.Endpoint{aliasOf(rr(www, "A", 0, "lb.elb.example"))},
			observed: []events.Endpoint{aliasOf(rr(www, "A", 300, "lb.elb.example")),
				rr("cname-"+www, "TXT", 300, owned("me", res))},
		},
		{
			// --registry=crd: the applier renders apex ownership with its types.
			name:    "crd: the apex ownership the applier renders, with its types, is left as it is",
			reg:     txtRegistry{Settings: registry.Settings{Registry: registry.RegistryCRD}, names: registry.CRDNames()},
			desired: []events.Endpoint{rr(zone, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"),
				rr(zone, "TXT", 300, registry.Labels{Owner: "me", Resource: res, Types: []string{"A"}}.Format())},
		},
		{
			name:    "crd: a second type at the apex joins the types of its ownership",
			reg:     txtRegistry{Settings: registry.Settings{Registry: registry.RegistryCRD}, names: registry.CRDNames()},
			desired: []events.Endpoint{rr(zone, "A", 0, "192.0.2.1"), rr(zone, "AAAA", 0, "2001:db8::1")},
			observed: []events.Endpoint{rr(zone, "A", 300, "192.0.2.1"),
				rr(zone, "TXT", 300, registry.Labels{Owner: "me", Resource: res, Types: []string{"A"}}.Format())},
			want: "update TXT " + zone + " " + registry.Labels{Owner: "me", Resource: res, Types: []string{"A", "AAAA"}}.Format() +
				"\ncreate AAAA " + zone + " 2001:db8::1",
		},
		{
			name:    "one type of two goes: no old-format record appears at the name",
			desired: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "AAAA", 300, "2001:db8::1"),
				rr("a-"+www, "TXT", 300, owned("me", res)), rr("aaaa-"+www, "TXT", 300, owned("me", res))},
			want: "delete AAAA www\ndelete TXT aaaa-www",
		},
		{
			name:    "--txt-suffix with %{record_type}",
			reg:     txtRegistry{names: registry.NewNames("", "-%{record_type}", "")},
			desired: []events.Endpoint{rr(www, "CNAME", 0, "lb.example.net")},
			want:    "create TXT www-cname " + owned("me", res) + "\ncreate CNAME www lb.example.net",
		},
		{
			name:    "--txt-wildcard-replacement",
			reg:     txtRegistry{names: registry.NewNames("", "", "any")},
			desired: []events.Endpoint{rr("*."+zone, "A", 0, "192.0.2.1")},
			want:    "create TXT a-any " + owned("me", res) + "\ncreate A * 192.0.2.1",
		},
		{
			name:     "old format with a prefix is read",
			reg:      txtRegistry{names: registry.NewNames("txt.", "", "")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("txt."+www, "TXT", 300, owned("me", ""))},
			want:     "delete A www\ndelete TXT txt.www",
		},
		{
			name:     "--migrate-from-txt-owner: the old owner's records are ours, ownership rewritten",
			reg:      txtRegistry{migrate: "old"},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("old", res))},
			want:     "update TXT a-www " + owned("me", res),
		},
		{
			name:     "--migrate-from-txt-owner: and may be deleted",
			reg:      txtRegistry{migrate: "old"},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("old", res))},
			want:     "delete A www\ndelete TXT a-www",
		},
		{
			name:     "without it, the old owner's records are foreign",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.9")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("old", res))},
			want:     "",
		},
		{
			name:     "--txt-adopt-owner: an adoptable owner's record is taken over",
			reg:      txtRegistry{adopt: []string{"x"}},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("x", "ingress/a/b"))},
			want:     "update TXT a-www " + owned("me", res) + "\nupdate A www 192.0.2.2",
		},
		{
			name:     "--txt-adopt-owner: an old-format string of an adoptable owner is rewritten, not duplicated",
			reg:      txtRegistry{adopt: []string{"x"}},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, owned("x", ""), "v=spf1 -all")},
			want:     "update TXT www " + owned("me", res) + "|v=spf1 -all",
		},
		{
			name:     "--txt-adopt-owner leaves owners not listed alone",
			reg:      txtRegistry{adopt: []string{"x"}},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("y", ""))},
			want:     "",
		},
		{
			name:     "record-type fields: another owner's A beside our wanted AAAA at one name",
			desired:  []events.Endpoint{rr(www, "AAAA", 0, "2001:db8::1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, fields("other", "A"))},
			want:     "create TXT aaaa-www " + owned("me", res) + "\ncreate AAAA www 2001:db8::1",
		},
		{
			name:     "record-type fields: a type the other owner lists is left alone",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.9")},
			observed: []events.Endpoint{rr(www, "TXT", 300, fields("other", "A", "AAAA"))},
			want:     "",
		},
		{
			name:     "record-type fields: ours cover AAAA in the old format",
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1"), rr(www, "AAAA", 0, "2001:db8::1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "AAAA", 300, "2001:db8::1"), rr(www, "TXT", 300, fields("me", "A", "AAAA"))},
			want:     "",
		},
		{
			name:     "record-type fields: deleting one type keeps the string compatible, less that type",
			desired:  []events.Endpoint{rr(www, "AAAA", 0, "2001:db8::1")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "AAAA", 300, "2001:db8::1"), rr(www, "TXT", 300, fields("me", "A", "AAAA"))},
			want:     "update TXT www " + fields("me", "AAAA") + "\ndelete A www",
		},
		{
			name:     "record-type fields: deleting the last type removes the string",
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "TXT", 300, fields("me", "A"), "v=spf1 -all")},
			want:     "delete A www\nupdate TXT www v=spf1 -all",
		},
		{
			name:    "--registry=noop: creates without ownership",
			reg:     txtRegistry{noop: true},
			desired: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			want:    "create A www 192.0.2.1",
		},
		{
			name:     "--registry=noop: everything of a managed type is ours (ExternalDNS): update and delete",
			reg:      txtRegistry{noop: true},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.2")},
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(www, "CNAME", 300, "x.example.net"), rr("a-"+www, "TXT", 300, owned("other", "")), rr(www, "TXT", 300, "v=spf1 -all")},
			want:     "update A www 192.0.2.2\ndelete CNAME www",
		},
		{
			name:     "--registry=noop with upsert-only never deletes",
			reg:      txtRegistry{noop: true},
			policy:   PolicyUpsertOnly,
			observed: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")},
			want:     "",
		},
		{
			name:     "--exclude-record-types: an excluded type is not touched",
			reg:      txtRegistry{managed: []string{"A"}},
			desired:  []events.Endpoint{rr(www, "A", 0, "192.0.2.1")},
			observed: []events.Endpoint{rr(www, "CNAME", 300, "x.example.net"), rr("cname-"+www, "TXT", 300, owned("me", ""))},
			want:     "create TXT a-www " + owned("me", res) + "\ncreate A www 192.0.2.1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			policy := tc.policy
			if policy == "" {
				policy = PolicySync
			}
			name := www
			if len(tc.desired) > 0 {
				name = tc.desired[0].DNSName
			}
			got := planWith(testRegistry(tc.reg), policy, name, tc.desired, tc.observed)
			if d := describe(got.changes); d != tc.want {
				t.Errorf("changes:\n%s\nwant:\n%s", d, tc.want)
			}
		})
	}
}

// A registry record is planned as a name of its own too (its TXT changed),
// and its name can read as an old-format claim of a host called like it.
// Taking over an owner must never make that phantom host delete the real
// host's ownership: in a single UPDATE the delete would also contradict
// the real host's rewrite of the same RRset, and BIND refuses both.
func TestRegistryNameIsNoHostOfItsOwn(t *testing.T) {
	www := "www." + zone
	xs := registry.Labels{Owner: "x", Resource: "service/default/web"}.Format()
	for _, tc := range []struct {
		name    string
		names   registry.Names
		regName string
	}{
		{"new format", registry.NewNames("", "", ""), "a-" + www},
		{"prefixed", registry.NewNames("xdns-", "", ""), "xdns-a-" + www},
		{"suffixed", registry.NewNames("", "-xdns", ""), "a-www-xdns." + zone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := testRegistry(txtRegistry{Settings: registry.Settings{OwnerID: "y"}, adopt: []string{"x"}, names: tc.names})
			observed := []events.Endpoint{rr(www, "A", 300, "192.0.2.1"), rr(tc.regName, "TXT", 300, xs)}
			for _, phantom := range []string{tc.regName, "a-" + www, "www-xdns." + zone} {
				if got := planWith(reg, PolicySync, phantom, nil, observed); len(got.changes) > 0 {
					t.Errorf("planning %s changed %s", phantom, describe(got.changes))
				}
			}
			got := planWith(reg, PolicySync, www, []events.Endpoint{rr(www, "A", 0, "192.0.2.1")}, observed)
			want := "update TXT " + strings.TrimSuffix(tc.regName, "."+zone) + " " +
				registry.Labels{Owner: "y", Resource: "service/default/web"}.Format()
			if d := describe(got.changes); d != want {
				t.Errorf("www's takeover:\n%s\nwant\n%s", d, want)
			}
		})
	}
}

// aliasOf marks a record as an alias (Route53), as the provider's
// AdjustEndpoints and listing do.
func aliasOf(ep events.Endpoint) events.Endpoint {
	ep.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}}
	return ep
}
