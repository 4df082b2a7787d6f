package rfc2136

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"time"

	"github.com/miekg/dns"
)

// tsig is a TSIG provider for every algorithm of --rfc2136-tsig-secret-alg,
// hmac-md5 included, which miekg/dns no longer signs with by itself.
type tsig struct{ name, secret string }

// hashes are the hash functions of the TSIG algorithms.
var hashes = map[string]func() hash.Hash{
	dns.HmacMD5:    md5.New,
	dns.HmacSHA1:   sha1.New,
	dns.HmacSHA224: sha256.New224,
	dns.HmacSHA256: sha256.New,
	dns.HmacSHA384: sha512.New384,
	dns.HmacSHA512: sha512.New,
}

func (t tsig) mac(msg []byte, rr *dns.TSIG) ([]byte, error) {
	if dns.CanonicalName(rr.Hdr.Name) != t.name {
		return nil, dns.ErrSecret
	}
	raw, err := base64.StdEncoding.DecodeString(t.secret)
	if err != nil {
		return nil, err
	}
	h, ok := hashes[dns.CanonicalName(rr.Algorithm)]
	if !ok {
		return nil, dns.ErrKeyAlg
	}
	m := hmac.New(h, raw)
	m.Write(msg)
	return m.Sum(nil), nil
}

func (t tsig) Generate(msg []byte, rr *dns.TSIG) ([]byte, error) { return t.mac(msg, rr) }

func (t tsig) Verify(msg []byte, rr *dns.TSIG) error {
	want, err := t.mac(msg, rr)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(rr.MAC)
	if err != nil {
		return err
	}
	if !hmac.Equal(want, got) {
		return dns.ErrSig
	}
	return nil
}

func (p *Provider) sign(m *dns.Msg) {
	m.SetTsig(p.keyName, p.alg, 300, time.Now().Unix())
}
