package stage

import (
	"flag"
	"log/slog"
	"strings"
)

// ignoredFlags are the flags of ExternalDNS (v0.23.0) that zonestream takes
// and does nothing with, and why: a Deployment moved over from ExternalDNS
// keeps its command line. A name ending in '=' takes a value; the others
// are boolean. Only flags no stage defines belong here
// (cmd/zonestream/cli TestEveryExternalDNSFlagParses checks it).
var ignoredFlags = []struct {
	reason string
	// provider: the flag of a provider the applier offers only in a build
	// with -tags externaldns, where ExternalDNS' own parser reads it.
	provider bool
	flags    string
}{
	{reason: "zonestream is event-driven: every change to a watched object is published as it happens",
		flags: "events min-event-sync-interval= listen-endpoint-events"},
	{reason: "the planner plans against the provider's records the applier keeps on the bus: there is no cache to tune",
		flags: "provider-cache-time= txt-cache-interval="},
	{reason: "a plan goes to the provider as soon as it is made; --batch-change-size bounds one plan",
		flags: "batch-change-interval="},
	{reason: "the collector's informers watch the API server: a timeout on each request would cut their watches",
		flags: "request-timeout= kube-api-request-timeout="},
	{reason: "the legacy annotations of mate, molecule and kops-dns-controller are not read",
		flags: "compatibility="},
	{reason: "there is no DynamoDB registry (--registry is txt, noop or crd)",
		flags: "dynamodb-region= dynamodb-table="},
	{reason: "several --rfc2136-host are asked in turn, as with ExternalDNS' default strategy (disabled), never spread",
		flags: "rfc2136-load-balancing-strategy="},
	{reason: "zonestream's coredns provider keeps ownership in the TXT registry only",
		flags: "coredns-strictly-owned"},
	{reason: "to serve a provider over the webhook protocol, run zonestream webhook-server",
		flags: "webhook-server"},
	// ExternalDNS' rfc2136, pdns, coredns, webhook and inmemory providers
	// never read them either (v0.21, v0.22): filtering here would drop zones
	// the ExternalDNS being replaced manages.
	{reason: "zone filters of ExternalDNS' providers (aws, azure, ...): read only in a build with -tags externaldns; " +
		"ExternalDNS' rfc2136, pdns, coredns, webhook and inmemory providers ignore them too", provider: true,
		flags: "zone-id-filter= zone-name-filter="},
	{reason: providerReason("alibabacloud"), provider: true,
		flags: "alibaba-cloud-config-file= alibaba-cloud-zone-type="},
	{reason: providerReason("aws and aws-sd"), provider: true,
		flags: "aws-api-retries= aws-assume-role= aws-assume-role-external-id= aws-batch-change-interval= " +
			"aws-batch-change-size= aws-batch-change-size-bytes= aws-batch-change-size-values= aws-evaluate-target-health " +
			"aws-prefer-cname aws-profile= aws-sd-create-tag= aws-sd-service-cleanup aws-zone-match-parent aws-zone-tags= " +
			"aws-zone-type= aws-zones-cache-duration="},
	{reason: providerReason("azure"), provider: true,
		flags: "azure-config-file= azure-maxretries-count= azure-resource-group= azure-subscription-id= " +
			"azure-user-assigned-identity-client-id= azure-zones-cache-duration="},
	{reason: providerReason("cloudflare"), provider: true,
		flags: "cloudflare-custom-hostnames cloudflare-custom-hostnames-certificate-authority= " +
			"cloudflare-custom-hostnames-min-tls-version= cloudflare-dns-records-per-page= cloudflare-proxied " +
			"cloudflare-record-comment= cloudflare-region-key= cloudflare-regional-services"},
	{reason: providerReason("exoscale"), provider: true,
		flags: "exoscale-apienv= exoscale-apikey= exoscale-apisecret= exoscale-apizone= exoscale-zones-cache-duration="},
	{reason: providerReason("godaddy"), provider: true,
		flags: "godaddy-api-key= godaddy-api-ote godaddy-api-secret= godaddy-api-ttl="},
	{reason: providerReason("google"), provider: true,
		flags: "google-batch-change-interval= google-batch-change-size= google-project= google-zone-visibility="},
	{reason: providerReason("ns1"), provider: true,
		flags: "ns1-endpoint= ns1-ignoressl ns1-min-ttl="},
	{reason: providerReason("oci"), provider: true,
		flags: "oci-auth-instance-principal oci-compartment-ocid= oci-config-file= oci-zone-scope= oci-zones-cache-duration="},
	{reason: providerReason("ovh"), provider: true,
		flags: "ovh-api-rate-limit= ovh-enable-cname-relative ovh-endpoint="},
	{reason: providerReason("pihole"), provider: true,
		flags: "pihole-password= pihole-server= pihole-tls-skip-verify"},
}

func providerReason(name string) string {
	return "a flag of the " + name + " provider, which the applier offers only in a build with -tags externaldns"
}

// renamedFlags are ExternalDNS' names for flags zonestream has under
// another name: each is the same flag.
var renamedFlags = []struct{ name, ours, usage string }{
	{"rfc2136-axfr", "rfc2136-tsig-axfr", "ExternalDNS v0.22's name of --rfc2136-tsig-axfr"},
	{"server", "master", "ExternalDNS' name of --master"},
}

// IgnoredFlag is one flag of the table, as the test of the table reads it.
type IgnoredFlag struct {
	Name    string
	Boolean bool
	// Provider: a provider's flag, read only with -tags externaldns.
	Provider bool
	Reason   string
}

// IgnoredFlagTable is every ignored flag of ExternalDNS, with its reason.
func IgnoredFlagTable() []IgnoredFlag {
	var all []IgnoredFlag
	for _, g := range ignoredFlags {
		for _, f := range strings.Fields(g.flags) {
			name, value := strings.CutSuffix(f, "=")
			all = append(all, IgnoredFlag{Name: name, Boolean: !value, Provider: g.provider, Reason: g.reason})
		}
	}
	return all
}

// RenamedFlags maps ExternalDNS' name of a flag to zonestream's.
func RenamedFlags() map[string]string {
	m := map[string]string{}
	for _, r := range renamedFlags {
		m[r.name] = r.ours
	}
	return m
}

// IgnoredFlags are the ignored flags a command line gave.
type IgnoredFlags struct {
	given []IgnoredFlag
	seen  map[string]bool
}

// AcceptExternalDNSFlags registers on fs what fs needs to take ExternalDNS'
// command line: ExternalDNS' names of flags fs defines under another
// (--rfc2136-axfr), and every ignored flag fs does not define. With
// providersTaken (a stage hands the providers' flags to ExternalDNS' own
// parser: Definition.TakeArgs), the providers' flags are not ignored and
// say nothing.
func AcceptExternalDNSFlags(fs *flag.FlagSet, providersTaken bool) *IgnoredFlags {
	ig := &IgnoredFlags{seen: map[string]bool{}}
	for _, r := range renamedFlags {
		if ours := fs.Lookup(r.ours); ours != nil && fs.Lookup(r.name) == nil {
			fs.Var(&renamedValue{fs: fs, ours: ours}, r.name, r.usage)
		}
	}
	for _, f := range IgnoredFlagTable() {
		if fs.Lookup(f.Name) != nil {
			continue
		}
		v := &ignoredValue{flag: f}
		if !f.Provider || !providersTaken {
			v.given = ig
		}
		fs.Var(v, f.Name, "ExternalDNS' flag, ignored: "+f.Reason)
	}
	return ig
}

// Given are the ignored flags given, each once, in the order first given.
func (ig *IgnoredFlags) Given() []IgnoredFlag { return ig.given }

// Log says once which ignored flags were given, and why they do nothing.
func (ig *IgnoredFlags) Log(logger *slog.Logger) {
	for _, f := range ig.given {
		logger.Info("ignored flag", "flag", "--"+f.Name, "reason", f.Reason)
	}
}

// ignoredValue takes any value (a repeated flag too) and notes the flag
// was given; its value is not kept, as it may be a secret.
type ignoredValue struct {
	flag  IgnoredFlag
	given *IgnoredFlags // nil: accepted without a word
}

func (v *ignoredValue) String() string   { return "" }
func (v *ignoredValue) IsBoolFlag() bool { return v.flag.Boolean }

func (v *ignoredValue) Set(string) error {
	if ig := v.given; ig != nil && !ig.seen[v.flag.Name] {
		ig.seen[v.flag.Name] = true
		ig.given = append(ig.given, v.flag)
	}
	return nil
}

// renamedValue sets the flag it is another name of, which then counts as
// given on the command line.
type renamedValue struct {
	fs   *flag.FlagSet
	ours *flag.Flag
}

func (v *renamedValue) String() string {
	if v.ours == nil {
		return ""
	}
	return v.ours.Value.String()
}

func (v *renamedValue) Set(s string) error { return v.fs.Set(v.ours.Name, s) }

func (v *renamedValue) IsBoolFlag() bool {
	b, ok := v.ours.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
