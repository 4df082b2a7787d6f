package dnsprovider

import (
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
)

var (
	// flagKey is a Secret key named like a flag (rfc2136-tsig-secret).
	flagKey = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	// envKey is one named like an environment variable (AWS_ACCESS_KEY_ID).
	envKey = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

// secretWords mark an ExternalDNS flag that holds a credential, for the
// providers zonestream does not register itself (its own say so by
// stage.SecretVar).
var secretWords = []string{"secret", "password", "token", "api-key", "apikey", "access-key", "private-key", "credentials", "client-key"}

// providerWideFlags are ExternalDNS' flags, not named after one provider,
// that only narrow which zones a provider serves: a setting of an
// ExternalDNS provider is one of these or one of its own (aws-...).
var providerWideFlags = []string{"domain-filter", "exclude-domains", "regex-domain-filter", "regex-domain-exclusion",
	"zone-id-filter", "zone-name-filter"}

// localWords mark a flag naming something of the applier's own machine (a
// file, a directory, a profile of a shared file, a kubeconfig): a team's
// DNSProvider must not make the applier read what the platform mounted
// for itself. A ClusterDNSProvider, the platform's own, may.
var localWords = []string{"-file", "-path", "-dir", "kubeconfig", "-profile", "-config"}

// foreignSetting says why a namespaced object may not give setting name
// of provider; "" when it may.
func foreignSetting(o *Object, name string, native bool) string {
	if !native {
		own := strings.SplitN(o.Spec.Provider, "-", 2)[0] + "-"
		if !strings.HasPrefix(name, own) && !slices.Contains(providerWideFlags, name) {
			return fmt.Sprintf("settings.%s is not a flag of provider %s (its own start with %q; of the others only %s)",
				name, o.Spec.Provider, own, strings.Join(providerWideFlags, ", "))
		}
	}
	if o.cluster() {
		return ""
	}
	for _, w := range localWords {
		if strings.Contains(name, w) {
			return fmt.Sprintf("settings.%s names a file or profile of zonestream's own: a DNSProvider may not; "+
				"a ClusterDNSProvider (the platform's) may", name)
		}
	}
	return ""
}

// nativeFlags are the flags of zonestream's own providers: all, and the
// secret ones (stage.SecretVar, their -file twins among them).
func nativeFlags() (all map[string]bool, secret map[string]bool) {
	var cfg applier.Config
	fs := flag.NewFlagSet("dnsprovider", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	all = map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { all[f.Name] = true })
	return all, stage.SecretFlags(fs)
}

// secretSetting says whether a setting of provider is a credential flag.
func secretSetting(provider, name string, secret map[string]bool) bool {
	if secret[name] {
		return true
	}
	if applier.NativeProvider(provider) {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// declare turns an object and its Secret (nil: it names none) into what
// builds its provider, or says why it cannot be run. Every value of the
// Secret is remembered for redaction (stage.RememberSecret).
func declare(o *Object, secret *corev1.Secret) (Declared, *refusal) {
	d := Declared{Provider: o.Spec.Provider, Env: map[string]string{}}
	if o.Spec.Provider == "" {
		return d, refuse(ReasonInvalidSpec, "spec.provider is empty")
	}
	all, secretFlags := nativeFlags()
	native := applier.NativeProvider(o.Spec.Provider)
	for _, name := range slices.Sorted(maps.Keys(o.Spec.Settings)) {
		switch {
		case secretSetting(o.Spec.Provider, name, secretFlags):
			return d, refuse(ReasonSecretInSettings, fmt.Sprintf("settings.%s holds a credential: put it in the Secret of credentials.secretRef "+
				"(key %q), where only zonestream's applier reads it", name, strings.TrimSuffix(name, "-file")))
		case native && (!all[name] || !strings.HasPrefix(name, o.Spec.Provider+"-")):
			return d, refuse(ReasonInvalidSpec, fmt.Sprintf("settings.%s is not a flag of provider %s", name, o.Spec.Provider))
		}
		if why := foreignSetting(o, name, native); why != "" {
			return d, refuse(ReasonInvalidSpec, why)
		}
		d.Args = append(d.Args, "--"+name+"="+o.Spec.Settings[name])
	}
	if o.cluster() && o.Spec.Credentials.SecretRef != nil && o.Spec.Credentials.SecretRef.Namespace == "" {
		return d, refuse(ReasonInvalidSpec, "a ClusterDNSProvider's credentials.secretRef needs a namespace")
	}
	if secret == nil {
		return d, nil
	}
	for _, key := range slices.Sorted(maps.Keys(secret.Data)) {
		value := string(secret.Data[key])
		stage.RememberSecret(value)
		switch {
		case envKey.MatchString(key):
			d.Env[key] = value
		case flagKey.MatchString(key) && strings.HasSuffix(key, "-file"):
			// A file of the applier's own: not for an object to name.
			return d, refuse(ReasonInvalidSpec, fmt.Sprintf("Secret key %q: give the credential itself, not a file", key))
		case flagKey.MatchString(key):
			if native && (!all[key] || !strings.HasPrefix(key, o.Spec.Provider+"-")) {
				return d, refuse(ReasonInvalidSpec, fmt.Sprintf("Secret key %q is not a flag of provider %s", key, o.Spec.Provider))
			}
			d.Args = append(d.Args, "--"+key+"="+value)
		default:
			return d, refuse(ReasonInvalidSpec, fmt.Sprintf("Secret key %q is named neither like a flag nor like an environment variable", key))
		}
	}
	return d, nil
}
