package registry

import (
	"bytes"
	"compress/gzip"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Encrypted registry strings, as ExternalDNS writes them with
// --txt-encrypt-enabled (endpoint/crypto.go): the plain registry string is
// gzip-compressed (best compression), sealed with AES-256-GCM (12-byte
// nonce, no additional data), the nonce prepended to the sealed bytes, and
// the whole encoded in standard base64 with padding:
//
//	base64.StdEncoding(nonce || AES-GCM-Seal(gzip(plain)))
//
// ExternalDNS' endpoint carries it in quotes ("..."), which are TXT
// presentation, not content: the string we hand the applier is the bare
// base64 text, as for plain registry strings, and quotes are trimmed on read.

// ParseAESKey accepts the key as ExternalDNS does (--txt-encrypt-aes-key):
// exactly 32 bytes are used as they are; anything else must be standard
// base64 of 32 bytes.
func ParseAESKey(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) == 32 {
		return []byte(s), nil
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(k) != 32 {
		return nil, errors.New("the AES encryption key must be 32 bytes long, in either plain text or base64-encoded format")
	}
	return k, nil
}

// Encrypt seals plain with key and the given 12-byte nonce.
func Encrypt(plain string, key, nonce []byte) (string, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return "", err
	}
	if len(nonce) != gcm.NonceSize() {
		return "", fmt.Errorf("nonce of %d bytes, want %d", len(nonce), gcm.NonceSize())
	}
	var b bytes.Buffer
	gz, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(gz, plain); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	sealed := gcm.Seal(bytes.Clone(nonce), nonce, b.Bytes(), nil)
	return base64.StdEncoding.EncodeToString(sealed), nil
}

// Decrypt opens a string Encrypt (or ExternalDNS) wrote, returning
// the plain text and the nonce it was sealed with. Data that authenticates
// but is not gzip is returned as it is, as the first ExternalDNS versions
// with encryption did.
func Decrypt(text string, key []byte) (plain string, nonce []byte, err error) {
	gcm, err := newGCM(key)
	if err != nil {
		return "", nil, err
	}
	data, err := base64.StdEncoding.DecodeString(strings.Trim(text, `"`))
	if err != nil {
		return "", nil, err
	}
	if len(data) <= gcm.NonceSize() {
		return "", nil, errors.New("encrypted registry string too short")
	}
	nonce, sealed := data[:gcm.NonceSize()], data[gcm.NonceSize():]
	opened, err := gcm.Open(nil, nonce, sealed, nil)
	if err != nil {
		return "", nil, err
	}
	gz, err := gzip.NewReader(bytes.NewReader(opened))
	if err != nil {
		return string(opened), nonce, nil
	}
	out, err := io.ReadAll(gz)
	if err != nil {
		return string(opened), nonce, nil
	}
	return string(out), nonce, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SyntheticNonce derives the nonce for a registry string from the key, the
// registry name and the plain text (a synthetic IV): planning stays
// deterministic (the same input seals to the same bytes, so a replay plans
// the same change), and a nonce is only ever reused for the very same plain
// text at the same name, which reveals nothing but that equality.
// ExternalDNS picks a random nonce and keeps it in the record's labels;
// readers do not care how the nonce was chosen.
func SyntheticNonce(key []byte, name, plain string) []byte {
	sub := hmac.New(sha256.New, key)
	sub.Write([]byte("zonestream txt registry nonce v1"))
	m := hmac.New(sha256.New, sub.Sum(nil))
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write([]byte(plain))
	return m.Sum(nil)[:12]
}
