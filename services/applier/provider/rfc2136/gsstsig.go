package rfc2136

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bodgittsig "github.com/bodgit/tsig"
	"github.com/bodgit/tsig/gss"
	"github.com/jcmturner/gokrb5/v8/krberror"
	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// GSSConfig is GSS-TSIG (RFC 3645) as ExternalDNS' rfc2136 provider does
// it, for Windows DNS (Active Directory) and BIND with
// tkey-gssapi-keytab: before signing, the provider gets a Kerberos ticket
// for DNS/<host> (the --rfc2136-host as given) and negotiates a TKEY with
// the server, with github.com/bodgit/tsig's gss client, as ExternalDNS
// v0.23 does. Kerberos is configured by /etc/krb5.conf or $KRB5_CONFIG.
type GSSConfig struct {
	Enabled bool
	// Username, Password and Realm are the Kerberos credentials; none
	// given: the default credential cache ($KRB5CCNAME) is used.
	Username, Password, Realm string
}

func (g *GSSConfig) registerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&g.Enabled, "rfc2136-gss-tsig", false, "when using the RFC2136 provider, sign updates with GSS-TSIG (RFC 3645, Windows DNS / Active Directory), negotiated by Kerberos; transfers go unsigned")
	fs.StringVar(&g.Username, "rfc2136-kerberos-username", "", "when using the RFC2136 provider with GSS-TSIG, the Kerberos user (none: the credential cache $KRB5CCNAME)")
	stage.SecretVar(fs, &g.Password, "rfc2136-kerberos-password", "when using the RFC2136 provider with GSS-TSIG, the Kerberos user's password")
	fs.StringVar(&g.Realm, "rfc2136-kerberos-realm", "", "when using the RFC2136 provider with GSS-TSIG, the Kerberos realm (upper-cased, as ExternalDNS does)")
}

// validate upper-cases the realm, as ExternalDNS does (Active Directory
// users give the domain in lower case), and checks that the credentials
// are all given or none: with some missing the Kerberos library would
// quietly fall back to the credential cache.
func (g *GSSConfig) validate() error {
	if !g.Enabled {
		return nil
	}
	g.Realm = strings.ToUpper(strings.TrimSpace(g.Realm))
	given := 0
	for _, v := range []string{g.Username, g.Password, g.Realm} {
		if v != "" {
			given++
		}
	}
	if given > 0 && given < 3 {
		return errors.New("rfc2136: --rfc2136-gss-tsig needs --rfc2136-kerberos-username, --rfc2136-kerberos-password and " +
			"--rfc2136-kerberos-realm together, or none of them to use the credential cache ($KRB5CCNAME)")
	}
	return nil
}

// gssRenewBefore is how long before its expiry a negotiated context is
// replaced, and gssMaxAge the longest one is kept: BIND keeps the TKEY it
// agreed to for an hour (the lifetime the client asks for) at most.
const (
	gssRenewBefore = time.Minute
	gssMaxAge      = 30 * time.Minute
)

// gssKeys are the negotiated GSS-TSIG contexts, one per server, kept
// between UPDATEs: ExternalDNS negotiates one per message, which is a
// Kerberos ticket request and a TKEY exchange each time.
type gssKeys struct {
	mu   sync.Mutex
	keys map[string]*gssKey
	// negotiated counts the contexts agreed on, for tests.
	negotiated atomic.Int64
}

// gssKey is one server's negotiated context: the TKEY name to sign with
// and the client that holds its security context.
type gssKey struct {
	name   string
	client *gss.Client
	until  time.Time
	// inUse is held for one signed exchange: the context numbers what it
	// signs and checks the answers' numbers in order, without a lock.
	inUse sync.Mutex
}

// key returns addr's context, negotiating one when there is none or it is
// about to expire, and whether it was negotiated just now.
func (ks *gssKeys) key(ctx context.Context, g GSSConfig, s server, network string, timeout time.Duration) (*gssKey, bool, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.keys[s.addr]; ok {
		if time.Now().Before(k.until) {
			return k, false, nil
		}
		k.close()
		delete(ks.keys, s.addr)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	k, err := negotiate(g, s, network, timeout)
	if err != nil {
		return nil, false, err
	}
	ks.negotiated.Add(1)
	if ks.keys == nil {
		ks.keys = map[string]*gssKey{}
	}
	ks.keys[s.addr] = k
	return k, true, nil
}

// drop forgets addr's context k (the server no longer knows it), unless
// another has replaced it.
func (ks *gssKeys) drop(addr string, k *gssKey) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.keys[addr] == k {
		k.close()
		delete(ks.keys, addr)
	}
}

// negotiate gets a Kerberos ticket for the server and agrees on a TKEY
// with it, over TCP (or TLS): the Kerberos token seldom fits a UDP
// answer.
func negotiate(g GSSConfig, s server, network string, timeout time.Duration) (*gssKey, error) {
	c, err := gss.NewClient(&dns.Client{Net: network, TLSConfig: s.tls, Timeout: timeout})
	if err != nil {
		return nil, provider.Permanentf("rfc2136: GSS-TSIG: %w", err)
	}
	name, expiry, err := c.NegotiateContextWithCredentials(s.addr, g.Realm, g.Username, g.Password)
	if err != nil {
		_ = c.Close()
		err = fmt.Errorf("rfc2136: GSS-TSIG negotiation with %s (as %s@%s, for DNS/%s): %w",
			s.addr, g.Username, g.Realm, hostOf(s.addr), err)
		if gssTransient(err) {
			return nil, err
		}
		return nil, provider.Permanentf("%w (check --rfc2136-kerberos-username, --rfc2136-kerberos-password, --rfc2136-kerberos-realm, "+
			"the krb5.conf ($KRB5_CONFIG) and the server's keytab)", err)
	}
	until := time.Now().Add(gssMaxAge)
	if e := expiry.Add(-gssRenewBefore); e.Before(until) {
		until = e
	}
	return &gssKey{name: name, client: c, until: until}, nil
}

// gssTransient says whether a negotiation failed for a reason that may
// pass: the KDC or the DNS server not answering, or the server failing
// (SERVFAIL). A KDC's refusal (a wrong password, an unknown user or
// service principal), a ticket that does not decrypt, a bad krb5.conf or
// a server refusing the TKEY does not heal by retrying.
func gssTransient(err error) bool {
	var ke krberror.Krberror
	if errors.As(err, &ke) {
		return ke.RootCause == krberror.NetworkingError
	}
	// gokrb5's login wraps its error with %v: only the text says why.
	if _, cause, ok := strings.Cut(err.Error(), "[Root cause: "); ok {
		return strings.HasPrefix(cause, krberror.NetworkingError)
	}
	// The network's errors only: a missing krb5.conf is a syscall.Errno
	// too, which says Timeout and Temporary like a net.Error.
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "DNS error: "+dns.RcodeToString[dns.RcodeServerFailure])
}

// hostOf is the host part of addr, the name in the service principal.
func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// close ends the context once no exchange uses it.
func (k *gssKey) close() {
	k.inUse.Lock()
	defer k.inUse.Unlock()
	_ = k.client.DeleteContext(k.name)
	_ = k.client.Close()
}

// signGSS signs m with k: the client verifies the server's signed answer
// with the same context.
func signGSS(c *dns.Client, m *dns.Msg, k *gssKey) {
	c.TsigProvider = k.client
	m.SetTsig(k.name, bodgittsig.GSS, 300, time.Now().Unix())
}
