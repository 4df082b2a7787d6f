package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// secretFlags are the flags that carry a secret. The NATS password has no
// flag at all (--nats-password-file or $ZS_NATS_PASSWORD, tested in
// the stage package).
var secretFlags = []string{"rfc2136-tsig-secret", "rfc2136-kerberos-password", "pdns-api-key", "txt-encrypt-aes-key", "coredns-etcd-password"}

// TestEverySecretFromEnvOrFile parses the all-in-one's flags, which are
// every stage's, and has each secret come from $EXTERNAL_DNS_<FLAG>, from
// --<flag>-file, and from a file named in $EXTERNAL_DNS_<FLAG>_FILE.
func TestEverySecretFromEnvOrFile(t *testing.T) {
	parse := func(t *testing.T, args ...string) *flag.FlagSet {
		t.Helper()
		a := NewAllInOne()
		a.fs.SetOutput(io.Discard)
		if _, err := a.Parse(args); err != nil {
			t.Fatal(err)
		}
		return a.fs
	}
	for _, name := range secretFlags {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(file, []byte("s3cret-from-file\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Run("env", func(t *testing.T) {
				t.Setenv(stage.EnvName(name), "s3cret-from-env")
				if got := parse(t).Lookup(name).Value.String(); got != "s3cret-from-env" {
					t.Fatalf("--%s from $%s: %q", name, stage.EnvName(name), got)
				}
			})
			t.Run("file", func(t *testing.T) {
				if got := parse(t, "--"+name+"-file="+file).Lookup(name).Value.String(); got != "s3cret-from-file" {
					t.Fatalf("--%s-file: %q", name, got)
				}
			})
			t.Run("file from env", func(t *testing.T) {
				t.Setenv(stage.EnvName(name+"-file"), file)
				if got := parse(t).Lookup(name).Value.String(); got != "s3cret-from-file" {
					t.Fatalf("$%s: %q", stage.EnvName(name+"-file"), got)
				}
			})
		})
	}
}

// TestNoSecretFlagWithoutAFile: every flag that looks like a secret has
// its --<flag>-file twin, so that a secret added later is not left on the
// command line only.
func TestNoSecretFlagWithoutAFile(t *testing.T) {
	looksSecret := regexp.MustCompile(`(secret|password|api-key|aes-key|token)$`)
	// An ignored flag of ExternalDNS (--pihole-password) keeps no value.
	ignored := map[string]bool{}
	for _, f := range stage.IgnoredFlagTable() {
		ignored[f.Name] = true
	}
	a := NewAllInOne()
	var found []string
	a.fs.VisitAll(func(f *flag.Flag) {
		if !looksSecret.MatchString(f.Name) || ignored[f.Name] {
			return
		}
		found = append(found, f.Name)
		if a.fs.Lookup(f.Name+"-file") == nil {
			t.Errorf("--%s has no --%s-file", f.Name, f.Name)
		}
	})
	if strings.Join(found, ",") != strings.Join(slices.Sorted(slices.Values(secretFlags)), ",") {
		t.Errorf("secret flags are %v; secretFlags lists %v", found, secretFlags)
	}
}
