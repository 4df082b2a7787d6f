package externaldns

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// Declared is a dnsprovider.Builder.
var _ dnsprovider.Builder = Declared

// envMu serializes the builds that set the environment.
var envMu sync.Mutex

// Declared is the dnsprovider.Builder for ExternalDNS' providers: it
// builds ExternalDNS' provider d.Provider from d.Args, as New does, with
// d.Env (the credentials of the object's Secret) in the environment while
// the provider is built, and only then.
//
// Several declared providers run in one process, each with its own
// credentials, but SDKs such as AWS' read theirs from the environment.
// They read it once, when the provider is built: ExternalDNS' aws
// provider calls aws-sdk-go-v2's config.LoadDefaultConfig in its New,
// which reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
// (config.NewEnvConfig) and keeps them as a StaticCredentialsProvider
// (resolveCredentialChain), as it keeps AWS_ROLE_ARN with
// AWS_WEB_IDENTITY_TOKEN_FILE in its web-identity provider, the region and
// the endpoint: nothing is read from the environment afterwards, so each
// provider keeps the credentials it was built with
// (TestDeclaredAWSProvidersEachUseTheirOwnCredentials proves it).
// Builds are therefore serialized and the environment is restored
// exactly afterwards: a variable that was unset is unset again. The
// process' own credentials are not in force meanwhile (ambient.go).
func Declared(ctx context.Context, d dnsprovider.Declared) (provider.Provider, error) {
	if err := checkDeclared(d); err != nil {
		return nil, configError(err)
	}
	args := append([]string{"--provider=" + d.Provider}, d.Args...)
	for _, v := range d.Env {
		// Values of a Secret: an error that echoes one is redacted.
		stage.RememberSecret(v)
	}
	envMu.Lock()
	defer envMu.Unlock()
	restore, err := setEnv(isolated(d.Env))
	if err != nil {
		return nil, err
	}
	defer restore()
	return withoutExit(func() (provider.Provider, error) {
		p, err := New(ctx, args, d.Options)
		if err != nil {
			// Not a nil *webhook.Provider in a non-nil interface.
			return nil, err
		}
		return p, nil
	})
}

// checkDeclared refuses what the object may not choose: a provider
// ExternalDNS does not have, another --provider among its settings, and
// ExternalDNS' flags given as EXTERNAL_DNS_* variables in the Secret (they
// belong in the settings, where the controller checks them).
func checkDeclared(d dnsprovider.Declared) error {
	if d.Provider == "" {
		return fmt.Errorf("declared provider: no provider named")
	}
	if why, ok := unlinked[d.Provider]; ok {
		return fmt.Errorf("declared provider %q is not in this build: %s", d.Provider, why)
	}
	if why, ok := removed[d.Provider]; ok {
		return fmt.Errorf("declared provider %q: %s", d.Provider, why)
	}
	if _, ok := constructors[d.Provider]; !ok {
		return fmt.Errorf("declared provider %q is not one of ExternalDNS' providers: one of %s",
			d.Provider, strings.Join(slices.Sorted(maps.Keys(constructors)), ", "))
	}
	for _, a := range d.Args {
		if a == "--provider" || strings.HasPrefix(a, "--provider=") {
			return fmt.Errorf("declared provider %q: the provider is spec.provider, not a setting", d.Provider)
		}
	}
	for k := range d.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("declared provider %q: %q is not an environment variable's name", d.Provider, k)
		}
		if strings.HasPrefix(k, "EXTERNAL_DNS_") {
			return fmt.Errorf("declared provider %q: the Secret's key %s is an ExternalDNS flag: give it as a setting", d.Provider, k)
		}
	}
	return nil
}

// setEnv sets env (unsets a nil value) and returns what puts the
// environment back as it was. It names variables in its errors, never
// their values.
func setEnv(env map[string]*string) (restore func(), err error) {
	type previous struct {
		value string
		set   bool
	}
	before := make(map[string]previous, len(env))
	restore = func() {
		for k, p := range before {
			if p.set {
				_ = os.Setenv(k, p.value)
			} else {
				_ = os.Unsetenv(k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v, set := os.LookupEnv(k)
		before[k] = previous{v, set}
		if env[k] == nil {
			err = os.Unsetenv(k)
		} else {
			err = os.Setenv(k, *env[k])
		}
		if err != nil {
			restore()
			return nil, fmt.Errorf("declared provider: setting %s: %w", k, err)
		}
	}
	return restore, nil
}
