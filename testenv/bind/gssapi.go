package bind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/testenv/internal/daemon"
)

// GSSAPI makes the zones take updates signed with GSS-TSIG (RFC 3645), as
// Windows DNS and BIND with Kerberos do: named accepts a TKEY negotiated
// with a ticket for a service principal in Keytab (DNS/<host>@REALM), and
// the zones' update-policy says which principals may change what.
type GSSAPI struct {
	// Keytab is tkey-gssapi-keytab: the DNS/<host> keys (testenv/kdc).
	Keytab string
	// Grants are update-policy rules, e.g. "grant user@REALM zonesub ANY".
	// The TSIG key may always update (Server.Update plants records).
	Grants []string
	// Krb5Conf, when set, is named's $KRB5_CONFIG.
	Krb5Conf string
}

// gssOption is the tkey-gssapi-keytab line, or nothing.
func (s *Server) gssOption() string {
	if s.opts.GSSAPI == nil {
		return ""
	}
	return fmt.Sprintf("\ttkey-gssapi-keytab %s;\n", strconv.Quote(s.opts.GSSAPI.Keytab))
}

// zoneAccess is a zone's update and transfer rules: the TSIG key's, or
// with GSSAPI the update-policy of the grants, the key's and transfers
// unsigned from loopback (GSS-TSIG signs updates only, as ExternalDNS
// uses it).
func (s *Server) zoneAccess() string {
	key := strconv.Quote(s.KeyName)
	if s.opts.GSSAPI == nil {
		return fmt.Sprintf("\tallow-update { key %s; };\n\tallow-transfer { key %s; };\n", key, key)
	}
	var b strings.Builder
	b.WriteString("\tupdate-policy {\n")
	for _, g := range s.opts.GSSAPI.Grants {
		fmt.Fprintf(&b, "\t\t%s;\n", strings.TrimSuffix(strings.TrimSpace(g), ";"))
	}
	fmt.Fprintf(&b, "\t\tgrant %s zonesub ANY;\n\t};\n\tallow-transfer { key %s; 127.0.0.1; };\n", key, key)
	return b.String()
}

// gssEnv is named's environment for GSSAPI: the Kerberos configuration,
// and the replay cache in the server's directory rather than /var/tmp.
func (s *Server) gssEnv() []string {
	if s.opts.GSSAPI == nil {
		return nil
	}
	env := []string{"KRB5RCACHEDIR=" + s.dir}
	if s.opts.GSSAPI.Krb5Conf != "" {
		env = append(env, "KRB5_CONFIG="+s.opts.GSSAPI.Krb5Conf)
	}
	return env
}

// StartGSST is StartT with zones that take GSS-TSIG updates as gss says.
func StartGSST(t testing.TB, gss *GSSAPI, zones ...string) *Server {
	return daemon.StartT(t, "named", func(ctx context.Context) (*Server, error) {
		return Start(ctx, Options{Zones: zones, GSSAPI: gss})
	})
}

// ForgetGSSKeys removes the TKEY keys a halted named keeps for its next
// start (the view's .tsigkeys file): restarted, it has forgotten every
// context a client negotiated, as a server replaced by another would.
func (s *Server) ForgetGSSKeys() error {
	files, err := filepath.Glob(filepath.Join(s.dir, "*.tsigkeys"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("bind: no .tsigkeys file: is named halted, with GSSAPI?")
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}
