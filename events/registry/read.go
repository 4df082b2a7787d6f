package registry

import "strings"

// Read reads a TXT string as a registry string, decrypting it first when a
// key is given; a string that does not decrypt is read as plain text, as
// ExternalDNS does (a zone may hold both).
func Read(txt string, key []byte) (Labels, bool) {
	if key != nil {
		if plain, _, err := Decrypt(txt, key); err == nil {
			return Parse(plain)
		}
	}
	return Parse(txt)
}

// Unreadable is the owner of a string that looks encrypted, to a reader
// without the key: it may be anyone's, ours included.
const Unreadable = "?"

// Owner is what a reader without the key takes a TXT string for: the owner
// a plain registry string names ("" when it names none, which is no one's
// we know), Unreadable for one that looks encrypted; ok is false for a TXT
// that is no registry string.
func Owner(txt string) (owner string, ok bool) {
	if l, ok := Parse(txt); ok {
		return l.Owner, true
	}
	if LooksEncrypted(txt) {
		return Unreadable, true
	}
	return "", false
}

// LooksEncrypted reports whether a TXT string that is no plain registry
// string may be an encrypted one (base64 of a nonce and more): a reader
// without the key must take it as possibly ours.
func LooksEncrypted(txt string) bool {
	txt = strings.Trim(txt, `"`)
	return len(txt) >= 24 && strings.Trim(txt, base64Alphabet) == ""
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
