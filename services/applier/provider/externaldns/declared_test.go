package externaldns_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/testenv/moto"
)

// environ is the process' environment, sorted.
func environ() []string {
	e := os.Environ()
	slices.Sort(e)
	return e
}

// changed are the names of the variables that differ between two
// environments (no values: they may be credentials).
func changed(before, after []string) []string {
	var names []string
	for _, kv := range slices.Concat(before, after) {
		if slices.Contains(before, kv) != slices.Contains(after, kv) {
			name, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// Two declared aws providers built in one process, each with the
// credentials of its own Secret, each list only their own account's
// hosted zones on moto (which keeps accounts apart and tells a request's
// account from its access key), not the account of the process' own
// credentials, also when built at the same time; one without a Secret
// lists nothing (the process' credentials are not lent to it); the
// environment afterwards is what it was before, and no credential is
// logged.
func TestDeclaredAWSProvidersEachUseTheirOwnCredentials(t *testing.T) {
	r := moto.Route53T(t)
	r.CreateZone(t, "process.example.org")
	teamA, teamB := r.AccountT(t, "111111111111"), r.AccountT(t, "222222222222")
	teamA.Route53.CreateZone(t, "a.example.org")
	teamB.Route53.CreateZone(t, "b.example.org")
	if teamA.Env["AWS_ACCESS_KEY_ID"] == teamB.Env["AWS_ACCESS_KEY_ID"] {
		t.Fatal("moto gave both accounts one key")
	}
	// A variable unset before the builds must be unset after them.
	t.Setenv("AWS_SESSION_TOKEN", "")
	os.Unsetenv("AWS_SESSION_TOKEN")
	before := environ()

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	build := func(a moto.Account) provider.Provider {
		p, err := externaldns.Declared(ctx, dnsprovider.Declared{Provider: "aws", Args: []string{"--aws-zone-type=public"},
			Env: a.Env, Options: provider.Options{DefaultTTL: 300, Logger: logger}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pb := build(teamA), build(teamB)
	// Built at the same time, each still gets its own (envMu).
	concurrent := make([]provider.Provider, 8)
	var wg sync.WaitGroup
	for i := range concurrent {
		wg.Go(func() { concurrent[i] = build([]moto.Account{teamA, teamB}[i%2]) })
	}
	wg.Wait()

	if after := environ(); !slices.Equal(after, before) {
		t.Fatalf("environment changed: %q", changed(before, after))
	}
	if _, set := os.LookupEnv("AWS_SESSION_TOKEN"); set {
		t.Fatal("AWS_SESSION_TOKEN is set after the builds; it was unset before")
	}
	for _, c := range []struct {
		p    provider.Provider
		want []string
	}{{pa, []string{"a.example.org"}}, {pb, []string{"b.example.org"}}} {
		zones, err := c.p.Zones(ctx)
		if err != nil || !slices.Equal(zones, c.want) {
			t.Errorf("zones %v %v, want %v", zones, err, c.want)
		}
	}
	for i, p := range concurrent {
		want := []string{[]string{"a.example.org", "b.example.org"}[i%2]}
		if zones, err := p.Zones(ctx); err != nil || !slices.Equal(zones, want) {
			t.Errorf("built concurrently, provider %d lists %v %v, want %v", i, zones, err, want)
		}
	}
	// Without a Secret, a declared provider does not write with the
	// process' own credentials, which reach process.example.org.
	none := build(moto.Account{})
	if zones, err := none.Zones(ctx); err == nil || len(zones) != 0 {
		t.Errorf("a declared provider without credentials lists %v (%v) with the process' own", zones, err)
	}
	if after := environ(); !slices.Equal(after, before) {
		t.Fatalf("environment changed: %q", changed(before, after))
	}

	for _, a := range []moto.Account{teamA, teamB} {
		for k, v := range a.Env {
			if strings.Contains(logs.String(), v) {
				t.Errorf("%s of account %s is in the log", k, a.ID)
			}
		}
	}
}

// A provider ExternalDNS does not have, a second --provider among the
// settings, or an ExternalDNS flag hidden in the Secret's variables is
// refused with an error saying so, before anything is built; a setting
// ExternalDNS refuses leaves the environment as it was.
func TestDeclaredRefusesWhatItCannotBuild(t *testing.T) {
	ctx := context.Background()
	t.Setenv("ZS_DECLARED_TEST_SET", "before")
	before := environ()
	for _, c := range []struct {
		name string
		d    dnsprovider.Declared
		want []string
	}{
		{"unknown provider", dnsprovider.Declared{Provider: "route54"},
			[]string{`"route54" is not one of ExternalDNS' providers`, "aws", "rfc2136"}},
		{"no provider", dnsprovider.Declared{}, []string{"no provider named"}},
		{"removed provider", dnsprovider.Declared{Provider: "gandi"}, []string{"webhook"}},
		{"provider among the settings", dnsprovider.Declared{Provider: "inmemory", Args: []string{"--provider=aws"}},
			[]string{"spec.provider, not a setting"}},
		{"ExternalDNS flag in the Secret", dnsprovider.Declared{Provider: "inmemory",
			Env: map[string]string{"EXTERNAL_DNS_PROVIDER": "aws"}}, []string{"EXTERNAL_DNS_PROVIDER is an ExternalDNS flag"}},
		{"bad setting", dnsprovider.Declared{Provider: "inmemory", Args: []string{"--no-such-setting=1"},
			Env: map[string]string{"ZS_DECLARED_TEST_SET": "during", "ZS_DECLARED_TEST_UNSET": "during"}},
			[]string{"no-such-setting"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := externaldns.Declared(ctx, c.d)
			if err == nil || p != nil {
				t.Fatalf("built %v, err %v", p, err)
			}
			if !errors.Is(err, externaldns.ErrConfig) {
				t.Errorf("%v is not an ErrConfig", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if after := environ(); !slices.Equal(after, before) {
				t.Fatalf("environment changed: %q", changed(before, after))
			}
		})
	}
}

// A declared inmemory provider is built from its settings like one
// given on the command line: its zones are its --inmemory-zone values.
func TestDeclaredBuildsFromSettings(t *testing.T) {
	p, err := externaldns.Declared(context.Background(), dnsprovider.Declared{Provider: "inmemory",
		Args: []string{"--inmemory-zone=a.example.org", "--inmemory-zone=b.example.org", "--domain-filter=a.example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	zones, err := p.Zones(context.Background())
	if err != nil || !slices.Equal(zones, []string{"a.example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
}

// A Secret the AWS SDK refuses (AWS_MAX_ATTEMPTS not a number), on which
// ExternalDNS' aws provider calls logrus.Fatal, gives an error saying why,
// with the value redacted, and the process goes on: other declared
// providers keep running. The environment is as it was.
func TestDeclaredProviderThatWouldExitGivesAnError(t *testing.T) {
	moto.EndpointT(t, "http://127.0.0.1:9") // never dialled: the build fails first
	before := environ()
	exit := reflect.ValueOf(logrus.StandardLogger().ExitFunc).Pointer()
	p, err := externaldns.Declared(context.Background(), dnsprovider.Declared{Provider: "aws",
		Env: map[string]string{"AWS_MAX_ATTEMPTS": "many-times"}})
	if err == nil || p != nil {
		t.Fatalf("built %v, err %v", p, err)
	}
	if !errors.Is(err, externaldns.ErrConfig) || !strings.Contains(err.Error(), "AWS_MAX_ATTEMPTS") ||
		strings.Contains(err.Error(), "many-times") {
		t.Errorf("error %q: want ErrConfig naming AWS_MAX_ATTEMPTS, without its value", err)
	}
	if after := environ(); !slices.Equal(after, before) {
		t.Fatalf("environment changed: %q", changed(before, after))
	}
	// logrus exits again outside a declared build.
	if reflect.ValueOf(logrus.StandardLogger().ExitFunc).Pointer() != exit {
		t.Errorf("logrus' exit is still replaced")
	}
}
