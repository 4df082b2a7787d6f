package stage

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/zonestream/zonestream/testenv/natsenv"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// TestCredentialsCredsFile: --nats-creds signs in with a user JWT and its
// NKey seed, as nsc writes them, against a server in operator mode; a user
// of an account the server does not trust is refused.
func TestCredentialsCredsFile(t *testing.T) {
	dir := t.TempDir()
	operator, _ := nkeys.CreateOperator()
	opPub, _ := operator.PublicKey()
	opJWT, err := jwt.NewOperatorClaims(opPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	opClaims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	account, _ := nkeys.CreateAccount()
	accPub, _ := account.PublicKey()
	accJWT, err := jwt.NewAccountClaims(accPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	creds := func(name string, signer nkeys.KeyPair) string {
		user, _ := nkeys.CreateUser()
		pub, _ := user.PublicKey()
		seed, _ := user.Seed()
		claims := jwt.NewUserClaims(pub)
		claims.Name = name
		userJWT, err := claims.Encode(signer)
		if err != nil {
			t.Fatal(err)
		}
		data, err := jwt.FormatUserConfig(userJWT, seed)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, name+".creds")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	resolver := &server.MemAccResolver{}
	if err := resolver.Store(accPub, accJWT); err != nil {
		t.Fatal(err)
	}
	url := natsenv.StartT(t, func(o *server.Options) {
		o.JetStream = false
		o.TrustedOperators, o.AccountResolver = []*jwt.OperatorClaims{opClaims}, resolver
	}).ClientURL()
	dial := func(file string) error {
		nc, err := Dial(url, "test", parseCredentials(t, "--nats-creds="+file), discard())
		if err == nil {
			nc.Close()
		}
		return err
	}
	if err := dial(creds("collector", account)); err != nil {
		t.Fatalf("a user of the trusted account: %v", err)
	}
	untrusted, _ := nkeys.CreateAccount()
	if err := dial(creds("intruder", untrusted)); err == nil {
		t.Error("a user signed by an account the operator never signed was admitted")
	}
	if err := dial(filepath.Join(dir, "missing.creds")); err == nil {
		t.Error("a missing .creds file was not an error")
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
