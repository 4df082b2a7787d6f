package bind

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/zonestream/zonestream/testenv/internal/daemon"
)

// TLS is a certificate and key named presents on its DNS over TLS
// listener (RFC 7858), BIND 9.18's `tls` block and `listen-on ... tls`.
type TLS struct {
	CertFile, KeyFile string
	// ClientCAFile, when set, makes named ask for a client certificate
	// signed by it (mutual TLS, the tls block's ca-file).
	ClientCAFile string
}

// tlsName names the tls block in named.conf.
const tlsName = "zonestream-tls"

// tlsListen is the listen-on line of the TLS listener, or nothing.
func (s *Server) tlsListen() string {
	if s.opts.TLS == nil {
		return ""
	}
	return fmt.Sprintf("\tlisten-on port %d tls %s { 127.0.0.1; };\n", s.TLSPort, tlsName)
}

// tlsBlock is the tls block naming the certificate, or nothing.
func (s *Server) tlsBlock() string {
	if s.opts.TLS == nil {
		return ""
	}
	ca := ""
	if s.opts.TLS.ClientCAFile != "" {
		ca = fmt.Sprintf("\tca-file %s;\n", strconv.Quote(s.opts.TLS.ClientCAFile))
	}
	return fmt.Sprintf("\ntls %s {\n\tcert-file %s;\n\tkey-file %s;\n%s};\n",
		tlsName, strconv.Quote(s.opts.TLS.CertFile), strconv.Quote(s.opts.TLS.KeyFile), ca)
}

// StartTLST is StartT with a DNS over TLS listener presenting tls.
func StartTLST(t testing.TB, tls *TLS, zones ...string) *Server {
	return daemon.StartT(t, "named", func(ctx context.Context) (*Server, error) {
		return Start(ctx, Options{Zones: zones, TLS: tls})
	})
}
