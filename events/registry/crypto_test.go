package registry

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestAESKeyAsExternalDNS(t *testing.T) {
	// ExternalDNS' TestNewTXTRegistryEncryptionConfig.
	k, err := ParseAESKey("passphrasewhichneedstobe32bytes!")
	if err != nil || string(k) != "passphrasewhichneedstobe32bytes!" {
		t.Fatalf("raw key: %q %v", k, err)
	}
	k, err = ParseAESKey("ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY=")
	want := []byte{100, 248, 173, 47, 67, 70, 85, 0, 89, 109, 48, 250, 15, 5, 201, 204, 63, 17, 137, 43, 82, 107, 60, 216, 93, 11, 29, 82, 140, 11, 81, 22}
	if err != nil || !bytes.Equal(k, want) {
		t.Fatalf("base64 key: %v %v", k, err)
	}
	if _, err := ParseAESKey("123456789012345678901234567890asdfasdfasdfasdfa12"); err == nil {
		t.Fatal("a 49-byte key must be refused")
	}
}

// The vector of ExternalDNS' endpoint/crypto_test.go (TestEncrypt).
func TestDecryptExternalDNSVector(t *testing.T) {
	key := []byte("s%zF`.*'5`9.AhI2!B,.~hmbs^.*TL?;")
	plaintext := "Lorem Ipsum is simply dummy text of the printing and typesetting industry. Lorem Ipsum has been the industry's standard dummy text ever since the 1500s, when an unknown printer took a galley of type and scrambled it to make a type specimen book. It has survived not only five centuries, but also the leap into electronic typesetting, remaining essentially unchanged. It was popularised in the 1960s with the release of Letraset sheets containing Lorem Ipsum passages, and more recently with desktop publishing software like Aldus PageMaker including versions of Lorem Ipsum."
	enc := "0Mfzf6wsN8llrfX0ucDZ6nlc2+QiQfKKedjPPLu5atb2I35L9nUZeJcCnuLVW7CVW3K0h94vSuBLdXnMrj8Vcm0M09shxaoF48IcCpD03XtQbKXqk2hPbsW6+JybvplHIQGr16/PcjUSObGmR9yjf38+qEltApkKvrPjsyw43BX4eE10rL0Bln33UJD7/w+zazRDPFlAcbGtkt0ETKHnvyB3/aCddLipvrhjCXj2ZY/ktRF6h716kJRgXU10dCIQHFYU45MIdxI+k10HK3yZqhI2V0Gp2xjrFV/LRQ7/OS9SFee4asPWUYxbCEsnOzp8qc0dCPFSo1dtADzWnUZnsAcbnjtudT4milfLJc5CxDk1v3ykqQ/ajejwHjWQ7b8U6AsTErbezfdcqrb5IzkLgHb5TosnfrdDmNc9GcKfpsrCHbVY8KgNwMVdtwavLv7d9WM6sooUlZ3t0sABGkzagXQmPRvwLnkSOlie5XrnzWo8/8/4UByLga29CaXO"
	got, nonce, err := Decrypt(enc, key)
	if err != nil || got != plaintext {
		t.Fatalf("decrypt: %q %v", got, err)
	}
	raw, _ := base64.StdEncoding.DecodeString(enc)
	if !bytes.Equal(nonce, raw[:12]) {
		t.Fatal("the nonce is the first 12 bytes")
	}
	// Quoted, as in ExternalDNS' endpoint target.
	if got, _, err := Decrypt(`"`+enc+`"`, key); err != nil || got != plaintext {
		t.Fatalf("quoted: %v", err)
	}
	if _, _, err := Decrypt(enc, []byte("s'J!jD`].LC?g&Oa11AgTub,j48ts/96")); err == nil {
		t.Fatal("a wrong key must fail")
	}
	if _, _, err := Decrypt(plaintext, key); err == nil {
		t.Fatal("plain text must fail")
	}
	// Our encryption of the same text with the vector's own nonce opens
	// to the same plain text (the gzip bytes may differ between Go
	// versions, so the ciphertext is not compared).
	again, err := Encrypt(plaintext, key, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := Decrypt(again, key); err != nil || got != plaintext {
		t.Fatalf("re-encrypted: %v", err)
	}
}
