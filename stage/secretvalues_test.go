package stage

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestParseRemembersEverySecret: a secret set by its flag, its
// environment variable or its file is remembered for redaction; other
// flags are not.
func TestParseRemembersEverySecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-the-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvName("env-secret"), "from-the-env")
	var a, b, c, plain string
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	SecretVar(fs, &a, "flag-secret", "")
	SecretVar(fs, &b, "env-secret", "")
	SecretVar(fs, &c, "file-secret", "")
	fs.StringVar(&plain, "plain", "", "")
	if err := Parse(fs, []string{"--flag-secret=from-the-flag", "--file-secret-file", file, "--plain=not-a-secret"}); err != nil {
		t.Fatal(err)
	}
	got := Secrets()
	for _, want := range []string{"from-the-flag", "from-the-env", "from-the-file"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q not remembered: %q", want, got)
		}
	}
	if slices.Contains(got, "not-a-secret") {
		t.Error("a plain flag was remembered as a secret")
	}
}
