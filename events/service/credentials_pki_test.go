package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// authority is a test CA that signs server and client certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate, PEM
}

func newAuthority(t *testing.T, dir, name string) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &authority{cert: cert, key: key, file: filepath.Join(dir, name+".pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate and key signed by ca and returns their files.
func (ca *authority) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startServer(t *testing.T, opts *server.Options) string {
	t.Helper()
	opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// TestCredentialsTLS: --nats-tls-ca verifies the server, and a server that
// verifies clients admits the one with --nats-tls-cert/--nats-tls-key.
func TestCredentialsTLS(t *testing.T) {
	dir := t.TempDir()
	ca, stranger := newAuthority(t, dir, "ca"), newAuthority(t, dir, "stranger")
	serverCert, serverKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: serverCert, KeyFile: serverKey, CaFile: ca.file, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.MinVersion = tls.VersionTLS12
	url := startServer(t, &server.Options{TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 2})
	dial := func(args ...string) error {
		nc, err := Dial(url, "test", parseCredentials(t, args...), discard())
		if err == nil {
			nc.Close()
		}
		return err
	}
	if err := dial("--nats-tls-ca="+ca.file, "--nats-tls-cert="+clientCert, "--nats-tls-key="+clientKey); err != nil {
		t.Fatalf("the client with a certificate of the server's CA: %v", err)
	}
	if err := dial("--nats-tls-ca=" + ca.file); err == nil {
		t.Error("a client without a certificate was admitted")
	}
	if err := dial("--nats-tls-ca="+stranger.file, "--nats-tls-cert="+clientCert, "--nats-tls-key="+clientKey); err == nil {
		t.Error("the server was trusted though another CA signed its certificate")
	}
	if err := dial("--nats-tls-ca="+ca.file, "--nats-tls-cert="+clientCert); err == nil {
		t.Error("a certificate without its key was accepted")
	}
}

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
	url := startServer(t, &server.Options{TrustedOperators: []*jwt.OperatorClaims{opClaims}, AccountResolver: resolver})
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
