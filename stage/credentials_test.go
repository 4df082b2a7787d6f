package stage

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/testenv/natsenv"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// startAuthServer runs a nats-server on loopback with one password user
// and one NKey user, and returns its URL and the NKey user's seed file.
func startAuthServer(t *testing.T, user, password string) (url, seedFile string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile = filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	url = natsenv.StartT(t, func(o *server.Options) {
		o.JetStream = false
		o.Users = []*server.User{{Username: user, Password: password}}
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}).ClientURL()
	return url, seedFile
}

// parseCredentials parses args and the environment as a service does.
func parseCredentials(t *testing.T, args ...string) Credentials {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var c Credentials
	c.RegisterFlags(fs)
	if err := Parse(fs, args); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCredentialsConnect(t *testing.T) {
	const password = "correct horse battery staple"
	url, seed := startAuthServer(t, "zs", password)
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrongFile := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrongFile, []byte("wrong"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	dial := func(c Credentials) error {
		nc, err := Dial(url, "test", c, logger)
		if err == nil {
			nc.Close()
		}
		return err
	}
	t.Run("password from a file", func(t *testing.T) {
		if err := dial(parseCredentials(t, "--nats-user=zs", "--nats-password-file="+pwFile)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("password from $ZS_NATS_PASSWORD", func(t *testing.T) {
		t.Setenv(EnvNatsPassword, password)
		if err := dial(parseCredentials(t, "--nats-user=zs")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("user and password file from $EXTERNAL_DNS_*", func(t *testing.T) {
		t.Setenv("EXTERNAL_DNS_NATS_USER", "zs")
		t.Setenv("EXTERNAL_DNS_NATS_PASSWORD_FILE", pwFile)
		if err := dial(parseCredentials(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nkey seed file", func(t *testing.T) {
		if err := dial(parseCredentials(t, "--nats-nkey="+seed)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong password refused", func(t *testing.T) {
		if err := dial(parseCredentials(t, "--nats-user=zs", "--nats-password-file="+wrongFile)); err == nil {
			t.Fatal("connected with a wrong password")
		}
	})
	t.Run("no credentials refused", func(t *testing.T) {
		if err := dial(Credentials{}); err == nil {
			t.Fatal("connected without credentials")
		}
	})
	t.Run("no password", func(t *testing.T) {
		err := dial(parseCredentials(t, "--nats-user=zs"))
		if err == nil || !strings.Contains(err.Error(), EnvNatsPassword) {
			t.Fatalf("a user without a password: %v", err)
		}
	})
	t.Run("two ways", func(t *testing.T) {
		if err := dial(parseCredentials(t, "--nats-user=zs", "--nats-nkey="+seed)); err == nil {
			t.Fatal("two ways of authenticating accepted")
		}
	})
	if strings.Contains(log.String(), password) {
		t.Fatalf("the password was logged:\n%s", log.String())
	}
}

func TestSecretFromFlagEnvOrFile(t *testing.T) {
	parse := func(t *testing.T, args ...string) (string, error) {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var secret string
		SecretVar(fs, &secret, "tsig-secret", "a secret")
		err := Parse(fs, args)
		return secret, err
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("flag", func(t *testing.T) {
		if s, err := parse(t, "--tsig-secret=from-flag"); s != "from-flag" || err != nil {
			t.Fatal(s, err)
		}
	})
	t.Run("file", func(t *testing.T) {
		if s, err := parse(t, "--tsig-secret-file="+file); s != "from-file" || err != nil {
			t.Fatal(s, err)
		}
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv("EXTERNAL_DNS_TSIG_SECRET", "from-env")
		if s, err := parse(t); s != "from-env" || err != nil {
			t.Fatal(s, err)
		}
	})
	t.Run("file named in env", func(t *testing.T) {
		t.Setenv("EXTERNAL_DNS_TSIG_SECRET_FILE", file)
		if s, err := parse(t); s != "from-file" || err != nil {
			t.Fatal(s, err)
		}
	})
	t.Run("command line wins over env", func(t *testing.T) {
		t.Setenv("EXTERNAL_DNS_TSIG_SECRET", "from-env")
		if s, err := parse(t, "--tsig-secret=from-flag"); s != "from-flag" || err != nil {
			t.Fatal(s, err)
		}
	})
	t.Run("both ways is an error that shows no secret", func(t *testing.T) {
		t.Setenv("EXTERNAL_DNS_TSIG_SECRET", "from-env")
		_, err := parse(t, "--tsig-secret-file="+file)
		if err == nil || strings.Contains(err.Error(), "from-") {
			t.Fatalf("secret in env and file: %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := parse(t, "--tsig-secret-file=/nonexistent"); err == nil || !strings.Contains(err.Error(), "--tsig-secret-file") {
			t.Fatalf("missing file: %v", err)
		}
	})
}
