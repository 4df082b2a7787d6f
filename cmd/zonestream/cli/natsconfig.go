package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// natsConfig is `zonestream nats-config`: it prints a nats-server
// configuration that gives every identity of the pipeline an NKey user
// with the permissions of events/permissions.go, and writes each
// identity's seed to --out-dir. Seeds already there are kept, so adding a
// cluster or a provider rotates no one else's key.
type natsConfig struct {
	clusters, providers    stage.StringList
	outDir                 string
	listen, storeDir, http string
	tlsCert, tlsKey, tlsCA string
	tlsVerify              bool
	collectorStatus        bool
	dnsProviders           bool
}

// NatsConfigCommand runs `zonestream nats-config` with args: the
// configuration goes to stdout, what to run next to stderr.
func NatsConfigCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nats-config", flag.ContinueOnError)
	var c natsConfig
	fs.Var(&c.clusters, "cluster", "a cluster whose collector gets an identity (repeatable, comma-separated)")
	fs.Var(&c.providers, "provider", "a provider whose applier gets an identity: its --provider-name, else its --provider (repeatable, comma-separated)")
	fs.StringVar(&c.outDir, "out-dir", "nats-credentials", "where each identity's NKey seed is written (<identity>.nk, mode 0600)")
	fs.StringVar(&c.listen, "listen", "0.0.0.0:4222", "the server's client address")
	fs.StringVar(&c.storeDir, "store-dir", "/data", "the server's JetStream store")
	fs.StringVar(&c.http, "http", "127.0.0.1:8222", "the server's monitoring address (no authentication: keep it on loopback, or behind a network policy); empty: none")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "the server's certificate file: clients must then use TLS (--nats-tls-ca)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the server's key file")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA file the server verifies client certificates with")
	fs.BoolVar(&c.tlsVerify, "tls-verify", false, "require a client certificate signed by --tls-ca")
	fs.BoolVar(&c.collectorStatus, "collector-status", true, "let collectors read every name's outcome for their objects' status (the outcome is every cluster's); "+
		"false: a collector reads only its own objects and runs with --kube-status=false")
	fs.BoolVar(&c.dnsProviders, "dnsproviders", false, "give the applier of the providers declared as DNSProvider and ClusterDNSProvider objects "+
		"(applier --dnsproviders) an identity, applier-dnsproviders: it may do what every provider's applier may")
	if err := stage.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("nats-config: unexpected arguments %q", fs.Args())
	}
	if len(c.clusters) == 0 || (len(c.providers) == 0 && !c.dnsProviders) {
		return errors.New("nats-config: give every --cluster and every --provider on the bus (or --dnsproviders)")
	}
	if c.dnsProviders && slices.Contains(c.providers, events.DeclaredApplierIdentity) {
		return fmt.Errorf("nats-config: --provider=%s and --dnsproviders would share the identity %s",
			events.DeclaredApplierIdentity, events.DeclaredApplierPermissions().Identity)
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("nats-config: --tls-cert and --tls-key go together")
	}
	users, err := c.users()
	if err != nil {
		return err
	}
	if _, err := stdout.Write(c.render(users)); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "seeds in %s; start each process with its own:\n", c.outDir)
	for _, u := range users {
		fmt.Fprintf(stderr, "  %-24s %s\n", u.perms.Identity, strings.Join(append(IdentityFlags(c.outDir, u.perms), u.perms.StageFlags...), " "))
	}
	fmt.Fprintln(stderr, "then, once, with the operator's: zonestream streams ensure "+
		strings.Join(IdentityFlags(c.outDir, events.OperatorPermissions()), " "))
	return nil
}

// IdentityFlags are the flags a process of identity p connects with.
func IdentityFlags(dir string, p events.Permissions) []string {
	return []string{"--nats-nkey=" + seedPath(dir, p.Identity), "--nats-inbox-prefix=" + p.InboxPrefix}
}

// natsUser is one identity: its permissions and its NKey.
type natsUser struct {
	perms  events.Permissions
	public string
}

// identities lists the permissions of every identity of the pipeline.
func (c *natsConfig) identities() []events.Permissions {
	var ids []events.Permissions
	collector := events.CollectorPermissions
	if !c.collectorStatus {
		collector = events.CollectorPermissionsWithoutStatus
	}
	for _, cl := range c.clusters {
		ids = append(ids, collector(cl))
	}
	ids = append(ids, events.DedupPermissions(), events.PlannerPermissions(), events.PortalPermissions())
	for _, p := range c.providers {
		ids = append(ids, events.ApplierPermissions(p))
	}
	if c.dnsProviders {
		ids = append(ids, events.DeclaredApplierPermissions())
	}
	return append(ids, events.OperatorPermissions())
}

// users gives every identity its NKey, reusing the seed in --out-dir.
func (c *natsConfig) users() ([]natsUser, error) {
	if err := os.MkdirAll(c.outDir, 0o700); err != nil {
		return nil, fmt.Errorf("nats-config: --out-dir: %w", err)
	}
	var users []natsUser
	seen := map[string]bool{}
	for _, p := range c.identities() {
		if seen[p.Identity] {
			continue
		}
		seen[p.Identity] = true
		kp, err := userKey(seedPath(c.outDir, p.Identity))
		if err != nil {
			return nil, fmt.Errorf("nats-config: %s: %w", p.Identity, err)
		}
		pub, err := kp.PublicKey()
		kp.Wipe()
		if err != nil {
			return nil, err
		}
		users = append(users, natsUser{perms: p, public: pub})
	}
	return users, nil
}

func seedPath(dir, identity string) string { return filepath.Join(dir, identity+".nk") }

// userKey reads the user seed at path, or makes one and writes it there.
func userKey(path string) (nkeys.KeyPair, error) {
	seed, err := os.ReadFile(path)
	if err == nil {
		return nkeys.ParseDecoratedNKey(seed)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, err = kp.Seed()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
		return nil, err
	}
	return kp, nil
}

// render writes the nats-server configuration. Strings are quoted, which
// keeps "$JS.API..." from reading as a variable reference.
func (c *natsConfig) render(users []natsUser) []byte {
	var b bytes.Buffer
	q := strconv.Quote
	list := func(indent string, l []string) string {
		var s strings.Builder
		s.WriteString("[\n")
		for _, v := range l {
			s.WriteString(indent + "  " + q(v) + "\n")
		}
		s.WriteString(indent + "]")
		return s.String()
	}
	fmt.Fprintf(&b, "# zonestream bus, generated by: zonestream nats-config --cluster %s --provider %s",
		strings.Join(c.clusters, ","), strings.Join(c.providers, ","))
	if c.dnsProviders {
		fmt.Fprintf(&b, " --dnsproviders")
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "# One NKey user per identity; its seed is %s/<identity>.nk. Regenerate rather\n", c.outDir)
	fmt.Fprintf(&b, "# than edit: the permissions follow the bus' subjects (events/permissions.go).\n")
	fmt.Fprintf(&b, "listen: %s\n", q(c.listen))
	if c.http != "" {
		fmt.Fprintf(&b, "http: %s\n", q(c.http))
	}
	fmt.Fprintf(&b, "jetstream: {store_dir: %s}\n", q(c.storeDir))
	if c.tlsCert != "" {
		fmt.Fprintf(&b, "tls: {cert_file: %s, key_file: %s", q(c.tlsCert), q(c.tlsKey))
		if c.tlsCA != "" {
			fmt.Fprintf(&b, ", ca_file: %s", q(c.tlsCA))
		}
		fmt.Fprintf(&b, ", verify: %t}\n", c.tlsVerify)
	}
	fmt.Fprintf(&b, "authorization: {\n  users: [\n")
	for _, u := range users {
		fmt.Fprintf(&b, "    # %s (--nats-inbox-prefix=%s)\n", u.perms.Identity, u.perms.InboxPrefix)
		fmt.Fprintf(&b, "    {nkey: %s, permissions: {\n", q(u.public))
		fmt.Fprintf(&b, "      publish: {allow: %s}\n", list("      ", u.perms.Publish))
		fmt.Fprintf(&b, "      subscribe: {allow: %s}\n", list("      ", u.perms.Subscribe))
		if u.perms.Responds {
			fmt.Fprintf(&b, "      allow_responses: true\n")
		}
		fmt.Fprintf(&b, "    }}\n")
	}
	fmt.Fprintf(&b, "  ]\n}\n")
	return b.Bytes()
}
