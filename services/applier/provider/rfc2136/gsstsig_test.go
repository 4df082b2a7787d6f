package rfc2136_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kdc"
)

const (
	gssUser     = "zonestream"
	gssPassword = "correct horse battery staple"
)

// startRealm runs a KDC of the test's own with the user and the DNS
// server's service principal, DNS/127.0.0.1 (the provider asks for a
// ticket to DNS/<--rfc2136-host>), and points the Kerberos client at it
// ($KRB5_CONFIG, as a deployment would). It returns the BIND settings that
// let that user, and only it, update the zones by GSS-TSIG.
func startRealm(t *testing.T) (*kdc.Server, *bind.GSSAPI) {
	t.Helper()
	k := kdc.StartT(t, "")
	keytab := filepath.Join(t.TempDir(), "dns.keytab")
	if err := k.AddUser(gssUser, gssPassword); err != nil {
		t.Fatal(err)
	}
	if err := k.AddService("DNS/127.0.0.1", keytab); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", k.Krb5Conf)
	return k, &bind.GSSAPI{Keytab: keytab, Krb5Conf: k.Krb5Conf,
		Grants: []string{"grant " + gssUser + "@" + k.Realm + " zonesub ANY"}}
}

// newGSSProvider is a provider signing with GSS-TSIG as gssUser, the realm
// given in lower case as Active Directory users write it, and
// --rfc2136-tsig-axfr set as ExternalDNS users set it to have zones listed.
func newGSSProvider(t *testing.T, s *bind.Server, k *kdc.Server, mod func(*rfc2136.Config)) *rfc2136.Provider {
	t.Helper()
	cfg := rfc2136.Config{
		Host: s.Host, Port: s.Port, Zones: s.Zones, TSIGAXFR: true, BatchChangeSize: 50,
		GSS:         rfc2136.GSSConfig{Enabled: true, Username: gssUser, Password: gssPassword, Realm: strings.ToLower(k.Realm)},
		RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, RetryBackoff: 10 * time.Millisecond},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := rfc2136.New(cfg, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The conformance suite (create, list, update, delete checked by DNS
// queries; a stale plan refused; a server down is transient) with every
// UPDATE signed by GSS-TSIG, against BIND taking only those (and its TSIG
// key's, which plants records behind the provider's back).
func TestConformanceGSSTSIG(t *testing.T) {
	k, gss := startRealm(t)
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := bind.StartGSST(t, gss, "example.org", "example.net")
		return newGSSProvider(t, s, k, func(c *rfc2136.Config) {
			if tune != nil {
				tune(&c.RetryConfig)
			}
		}), providertest.BIND{Server: s}
	}, providertest.Options{ApexNS: true})
}

// GSS-TSIG against a real KDC and BIND: records created, updated and
// deleted, one context serving many UPDATEs and negotiated anew when the
// server has forgotten it; unsigned updates and a wrong password are
// refused for good and write nothing; the KDC down is transient.
func TestGSSTSIG(t *testing.T) {
	k, gss := startRealm(t)
	s := bind.StartGSST(t, gss, "example.org")
	ctx := context.Background()
	p := provider.Checked(newGSSProvider(t, s, k, nil))
	raw := newGSSProvider(t, s, k, nil) // the same, for its negotiation count
	answers := func(name string) []string {
		t.Helper()
		return providertest.Answers(t, s, name, dns.TypeA)
	}
	apply := func(p provider.Provider, changes ...events.Change) error {
		return p.Apply(ctx, "example.org", changes)
	}

	www := ep("www.example.org", "A", 60, "192.0.2.1")
	if err := apply(p, events.Change{New: www}); err != nil {
		t.Fatalf("create: %v\nnamed:\n%s", err, s.Log())
	}
	if got := answers("www.example.org"); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("after create: %v", got)
	}
	www2 := ep("www.example.org", "A", 60, "192.0.2.2", "192.0.2.3")
	if err := apply(p, events.Change{Old: www, New: www2}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := answers("www.example.org"); !slices.Equal(got, []string{"192.0.2.2", "192.0.2.3"}) {
		t.Fatalf("after update: %v", got)
	}
	if err := apply(p, events.Change{Old: www2}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := answers("www.example.org"); len(got) != 0 {
		t.Fatalf("after delete: %v", got)
	}
	eps, err := p.Records(ctx, "example.org") // unsigned AXFR, allowed from loopback
	if err != nil || providertest.Find(eps, "ns.example.org", "A") == nil {
		t.Fatalf("listing: %v %v", eps, err)
	}

	// One context serves UPDATE after UPDATE.
	for i, name := range []string{"a.example.org", "b.example.org", "c.example.org"} {
		if err := apply(raw, events.Change{New: ep(name, "A", 60, "192.0.2.10")}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := raw.GSSNegotiations(); n != 1 {
			t.Fatalf("after %d UPDATEs, %d negotiations, want 1", i+1, n)
		}
	}
	// BIND keeps the contexts across a restart: the same one serves on.
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := apply(raw, events.Change{New: ep("e.example.org", "A", 60, "192.0.2.11")}); err != nil {
		t.Fatalf("after restart: %v\nnamed:\n%s", err, s.Log())
	}
	if n := raw.GSSNegotiations(); n != 1 {
		t.Fatalf("after a restart, %d negotiations, want 1", n)
	}
	// A server that has forgotten the context refuses it once; a new one
	// is negotiated and the UPDATE lands.
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetGSSKeys(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := apply(raw, events.Change{New: ep("d.example.org", "A", 60, "192.0.2.11")}); err != nil {
		t.Fatalf("after restart: %v\nnamed:\n%s", err, s.Log())
	}
	if n := raw.GSSNegotiations(); n != 2 {
		t.Fatalf("after the server forgot the context, %d negotiations, want 2", n)
	}
	if got := answers("d.example.org"); !slices.Equal(got, []string{"192.0.2.11"}) {
		t.Fatalf("after the server forgot the context: %v", got)
	}

	// The zone takes no unsigned update.
	unsigned := newGSSProvider(t, s, k, func(c *rfc2136.Config) { c.Insecure = true; c.TSIGAXFR = false })
	err = apply(unsigned, events.Change{New: ep("unsigned.example.org", "A", 60, "192.0.2.9")})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "REFUSED") {
		t.Fatalf("unsigned update: %v", err)
	}
	if got := answers("unsigned.example.org"); len(got) != 0 {
		t.Fatalf("unsigned update written: %v", got)
	}

	// A wrong password: the KDC refuses, permanently, and nothing is sent.
	const wrongPassword = "Tr0ub4dor&3"
	wrong := provider.Checked(newGSSProvider(t, s, k, func(c *rfc2136.Config) { c.GSS.Password = wrongPassword }))
	err = apply(wrong, events.Change{New: ep("wrong.example.org", "A", 60, "192.0.2.9")})
	if !errors.Is(err, provider.ErrPermanent) || !strings.Contains(err.Error(), "--rfc2136-kerberos-password") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), wrongPassword) {
		t.Fatalf("the password is in the error: %v", err)
	}
	t.Logf("wrong password: %v", err)
	if got := answers("wrong.example.org"); len(got) != 0 {
		t.Fatalf("written with a wrong password: %v", got)
	}

	// The KDC down: no ticket, which may come back; nothing written. Back,
	// the same provider gets its ticket and writes.
	if err := k.Halt(); err != nil {
		t.Fatal(err)
	}
	fresh := provider.Checked(newGSSProvider(t, s, k, func(c *rfc2136.Config) { c.Retries = 1 }))
	nokdc := events.Change{New: ep("nokdc.example.org", "A", 60, "192.0.2.9")}
	err = apply(fresh, nokdc)
	if err == nil || errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("KDC down: %v, want a transient error", err)
	}
	t.Logf("KDC down: %v", err)
	if got := answers("nokdc.example.org"); len(got) != 0 {
		t.Fatalf("written without a ticket: %v", got)
	}
	if err := k.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := apply(fresh, nokdc); err != nil {
		t.Fatalf("KDC back: %v", err)
	}

	// No krb5.conf where $KRB5_CONFIG says: permanent, nothing written.
	t.Setenv("KRB5_CONFIG", filepath.Join(t.TempDir(), "missing-krb5.conf"))
	noConf := provider.Checked(newGSSProvider(t, s, k, nil))
	err = apply(noConf, events.Change{New: ep("noconf.example.org", "A", 60, "192.0.2.9")})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("no krb5.conf: %v, want a permanent error", err)
	}
	if got := answers("noconf.example.org"); len(got) != 0 {
		t.Fatalf("written without a krb5.conf: %v", got)
	}
}

// --rfc2136-gss-tsig needs no TSIG key; its credentials come all three or
// none (the credential cache).
func TestGSSConfig(t *testing.T) {
	base := func(g rfc2136.GSSConfig) rfc2136.Config {
		return rfc2136.Config{Host: "127.0.0.1", Zones: []string{"example.org"}, BatchChangeSize: 1, GSS: g}
	}
	for name, g := range map[string]rfc2136.GSSConfig{
		"credentials":      {Enabled: true, Username: "u", Password: "p", Realm: "example.org"},
		"credential cache": {Enabled: true},
	} {
		if _, err := rfc2136.New(base(g), provider.Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, g := range map[string]rfc2136.GSSConfig{
		"no realm":    {Enabled: true, Username: "u", Password: "p"},
		"no password": {Enabled: true, Username: "u", Realm: "EXAMPLE.ORG"},
		"no username": {Enabled: true, Password: "p", Realm: "EXAMPLE.ORG"},
		"no gss":      {Username: "u", Password: "p", Realm: "EXAMPLE.ORG"}, // and no TSIG key
	} {
		if _, err := rfc2136.New(base(g), provider.Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// ExternalDNS' command line, the password from a file as a Deployment
// mounts it: the flags reach the provider, which writes with GSS-TSIG.
func TestGSSTSIGFlags(t *testing.T) {
	k, gss := startRealm(t)
	s := bind.StartGSST(t, gss, "example.org")
	passwordFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(passwordFile, []byte(gssPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg rfc2136.Config
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := stage.Parse(fs, []string{"--rfc2136-host=" + s.Host, "--rfc2136-port=" + strconv.Itoa(s.Port), "--rfc2136-zone=example.org",
		"--rfc2136-gss-tsig", "--rfc2136-kerberos-username=" + gssUser, "--rfc2136-kerberos-password-file=" + passwordFile,
		"--rfc2136-kerberos-realm=" + strings.ToLower(k.Realm), "--rfc2136-tsig-axfr"}); err != nil {
		t.Fatal(err)
	}
	p, err := rfc2136.New(cfg, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(context.Background(), "example.org", []events.Change{{New: ep("flags.example.org", "A", 60, "192.0.2.5")}}); err != nil {
		t.Fatal(err)
	}
	if got := providertest.Answers(t, s, "flags.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.5"}) {
		t.Fatalf("A: %v", got)
	}
}
