package stage

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EnvNatsPassword holds the NATS password when --nats-password-file is not
// given. There is no --nats-password flag: a flag's value shows in ps.
const EnvNatsPassword = "ZS_NATS_PASSWORD"

// Credentials are how a process proves who it is to NATS, and the TLS it
// speaks. Which subjects it may then use is the server's business
// (zonestream nats-config generates that configuration). Every secret is
// read from a file or the environment, never from the command line.
type Credentials struct {
	// CredsFile is a .creds file: a user JWT and its NKey seed
	// (decentralized auth, nsc).
	CredsFile string
	// NkeyFile holds an NKey user seed (SU...).
	NkeyFile string
	// User and its password, read from PasswordFile or $ZS_NATS_PASSWORD.
	User         string
	PasswordFile string
	// TLS: the CA that signed the server's certificate, and a client
	// certificate when the server verifies clients.
	TLSCA, TLSCert, TLSKey string
	// InboxPrefix is where the replies to this process' requests arrive
	// (JetStream acks, pulled messages). The generated permissions let
	// each identity subscribe to its own prefix only, so that no one
	// reads another's replies.
	InboxPrefix string
	// JSDomain is the JetStream domain of the bus, for a process connected
	// to a NATS leaf node in its own cluster: the leaf passes the domain's
	// API ($JS.<domain>.API) on to the hub that holds the streams.
	JSDomain string
}

// JetStream returns the JetStream API of nc, in JSDomain if one is set.
func (c *Credentials) JetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	if c.JSDomain != "" {
		return jetstream.NewWithDomain(nc, c.JSDomain)
	}
	return jetstream.New(nc)
}

// RegisterFlags adds the credential flags.
func (c *Credentials) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.CredsFile, "nats-creds", "", "NATS user credentials file (JWT and NKey seed, as nsc writes it)")
	fs.StringVar(&c.NkeyFile, "nats-nkey", "", "NATS NKey user seed file (as zonestream nats-config writes it)")
	fs.StringVar(&c.User, "nats-user", "", "NATS user; its password comes from --nats-password-file or $"+EnvNatsPassword)
	fs.StringVar(&c.PasswordFile, "nats-password-file", "", "file holding the password of --nats-user")
	fs.StringVar(&c.TLSCA, "nats-tls-ca", "", "CA certificate file to verify the NATS server with (turns TLS on)")
	fs.StringVar(&c.TLSCert, "nats-tls-cert", "", "client certificate file for NATS (with --nats-tls-key)")
	fs.StringVar(&c.TLSKey, "nats-tls-key", "", "client key file for NATS (with --nats-tls-cert)")
	fs.StringVar(&c.JSDomain, "nats-js-domain", "", "JetStream domain of the bus, when connecting through a NATS leaf node (see docs/multi-cluster.md)")
	fs.StringVar(&c.InboxPrefix, "nats-inbox-prefix", "_INBOX",
		"subject prefix of this process' reply inboxes; with generated permissions, the one printed for its identity")
}

// Options turns the credentials into NATS connect options. Secret files
// are read here, so that a missing one fails the start with its flag's
// name rather than as an authorization error later.
func (c *Credentials) Options() ([]nats.Option, error) {
	var opts []nats.Option
	ways := 0
	for _, set := range []string{c.CredsFile, c.NkeyFile, c.User} {
		if set != "" {
			ways++
		}
	}
	if ways > 1 {
		return nil, errors.New("give one of --nats-creds, --nats-nkey and --nats-user")
	}
	switch {
	case c.CredsFile != "":
		if _, err := os.Stat(c.CredsFile); err != nil {
			return nil, fmt.Errorf("--nats-creds: %w", err)
		}
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	case c.NkeyFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey: %w", err)
		}
		opts = append(opts, o)
	case c.User != "":
		password, err := c.password()
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(c.User, password))
	default:
		if c.PasswordFile != "" {
			return nil, errors.New("--nats-password-file needs --nats-user")
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, errors.New("--nats-tls-cert and --nats-tls-key go together")
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	if c.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(c.InboxPrefix))
	}
	return opts, nil
}

// password reads the password of --nats-user from its file or the
// environment. It is never logged nor put in an error.
func (c *Credentials) password() (string, error) {
	if c.PasswordFile != "" {
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return "", fmt.Errorf("--nats-password-file: %w", err)
		}
		p := strings.TrimRight(string(b), "\r\n")
		RememberSecret(p)
		return p, nil
	}
	if p, ok := os.LookupEnv(EnvNatsPassword); ok {
		RememberSecret(p)
		return p, nil
	}
	return "", fmt.Errorf("--nats-user %s has no password: give --nats-password-file or $%s", c.User, EnvNatsPassword)
}
