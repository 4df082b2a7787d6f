package dnsprovider

import (
	"flag"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/applier"
)

func object(ns, provider string, settings map[string]string) *Object {
	o := &Object{Spec: Spec{Provider: provider, Settings: settings}}
	o.Metadata.Namespace, o.Metadata.Name = ns, "dns"
	return o
}

// Every credential flag zonestream registers (stage.SecretVar), its -file
// twin too, and ExternalDNS' credential flags by their names, are refused
// in settings; the other flags of the provider become its arguments.
func TestDeclareRefusesCredentialsInSettings(t *testing.T) {
	for _, c := range []struct{ provider, setting string }{
		{"rfc2136", "rfc2136-tsig-secret"}, {"rfc2136", "rfc2136-tsig-secret-file"}, {"pdns", "pdns-api-key"},
		{"coredns", "coredns-etcd-password"}, {"cloudflare", "cloudflare-api-token"}, {"aws", "aws-secret-access-key"},
		{"azure", "azure-client-secret"},
	} {
		_, ref := declare(object("a", c.provider, map[string]string{c.setting: "s3cr3t"}), nil)
		if ref == nil || ref.reason != ReasonSecretInSettings {
			t.Errorf("%s: settings.%s: %v", c.provider, c.setting, ref)
		}
	}
	d, ref := declare(object("a", "rfc2136", map[string]string{"rfc2136-host": "10.0.0.53", "rfc2136-zone": "a.example.org"}),
		&corev1.Secret{Data: map[string][]byte{"rfc2136-tsig-secret": []byte("c2VjcmV0"), "SDK_TOKEN": []byte("t")}})
	if ref != nil {
		t.Fatal(ref)
	}
	want := []string{"--rfc2136-host=10.0.0.53", "--rfc2136-zone=a.example.org", "--rfc2136-tsig-secret=c2VjcmV0"}
	if !slices.Equal(d.Args, want) || d.Env["SDK_TOKEN"] != "t" {
		t.Fatalf("args %v env %v", d.Args, d.Env)
	}
}

// Settings and Secret keys that are no flag of the provider, a Secret key
// naming a file, and a ClusterDNSProvider's secretRef without a namespace
// are refused as InvalidSpec.
func TestDeclareRefusesWhatIsNoFlagOfTheProvider(t *testing.T) {
	cases := map[string]struct {
		o      *Object
		secret *corev1.Secret
	}{
		"another provider's flag": {object("a", "inmemory", map[string]string{"rfc2136-host": "x"}), nil},
		"an applier flag":         {object("a", "inmemory", map[string]string{"provider-timeout": "1s"}), nil},
		"unknown flag":            {object("a", "rfc2136", map[string]string{"rfc2136-nope": "x"}), nil},
		"a file in the Secret": {object("a", "rfc2136", nil),
			&corev1.Secret{Data: map[string][]byte{"rfc2136-tsig-secret-file": []byte("/etc/passwd")}}},
		"a Secret key of no kind": {object("a", "rfc2136", nil), &corev1.Secret{Data: map[string][]byte{"Mixed.Key": []byte("x")}}},
		// A team may not point the applier at what the platform mounted.
		"a file of the applier's":                {object("a", "azure", map[string]string{"azure-config-file": "/etc/kubernetes/azure.json"}), nil},
		"a profile of a shared file":             {object("a", "aws", map[string]string{"aws-profile": "platform"}), nil},
		"a kubeconfig":                           {object("a", "aws", map[string]string{"kubeconfig": "/root/.kube/config"}), nil},
		"another provider's flag of ExternalDNS": {object("a", "aws", map[string]string{"google-project": "x"}), nil},
		"a flag of the whole command line":       {object("a", "aws", map[string]string{"txt-owner-id": "x"}), nil},
	}
	cluster := object("", "inmemory", nil)
	cluster.Spec.Credentials.SecretRef = &SecretRef{Name: "dns"}
	cases["ClusterDNSProvider secretRef without namespace"] = struct {
		o      *Object
		secret *corev1.Secret
	}{cluster, nil}
	for name, c := range cases {
		if _, ref := declare(c.o, c.secret); ref == nil || ref.reason != ReasonInvalidSpec {
			t.Errorf("%s: %v", name, ref)
		}
	}
}

// What a ClusterDNSProvider, the platform's, may give and a team's
// DNSProvider may too.
func TestDeclareTakesProviderSettings(t *testing.T) {
	cluster := object("", "azure", map[string]string{"azure-config-file": "/etc/kubernetes/azure.json"})
	cluster.Spec.Credentials.SecretRef = &SecretRef{Name: "dns", Namespace: "platform"}
	for name, o := range map[string]*Object{
		"ClusterDNSProvider naming a file": cluster,
		"own flags and a domain filter":    object("a", "aws", map[string]string{"aws-zone-type": "public", "domain-filter": "a.example.com"}),
		"a provider named in parts":        object("a", "azure-private-dns", map[string]string{"azure-resource-group": "rg"}),
	} {
		if _, ref := declare(o, nil); ref != nil {
			t.Errorf("%s: refused: %v", name, ref)
		}
	}
}

func TestRestartReason(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"1/10/false", "2/10/false", "spec"}, {"1/10/false", "1/11/false", "secret"},
		{"1/10/false", "1/10/true", "retiring"}, {"invalid", "1/10/false", "spec"}, {"1/missing/false", "1/12/false", "secret"},
	} {
		if got := restartReason(c.old, c.new); got != c.want {
			t.Errorf("%s -> %s: %s, want %s", c.old, c.new, got, c.want)
		}
	}
}

// A declared provider starts from the command line's applier flags, not
// from the flags of the provider declared there: a DNSProvider giving no
// host must not inherit the platform's server and zone.
func TestBaseConfigLeavesTheFlagProviderOut(t *testing.T) {
	var cfg applier.Config
	fs := flag.NewFlagSet("zonestream", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"--provider=rfc2136", "--provider-name=platform", "--rfc2136-host=10.0.0.53",
		"--rfc2136-zone=example.com", "--interval=7s", "--default-ttl=42"}); err != nil {
		t.Fatal(err)
	}
	base, err := baseConfig(fs)
	if err != nil {
		t.Fatal(err)
	}
	if base.Provider != "" || base.Name != "" || base.RFC2136.Host != "" || len(base.RFC2136.Hosts) != 0 || len(base.RFC2136.Zones) != 0 {
		t.Fatalf("the flag provider's flags were carried over: %+v", base.RFC2136)
	}
	if base.Interval != 7*time.Second || base.DefaultTTL != 42 {
		t.Fatalf("every applier's flags were not: interval %s, default TTL %d", base.Interval, base.DefaultTTL)
	}
}
