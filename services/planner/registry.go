package planner

import (
	"slices"

	"github.com/zonestream/zonestream/events/registry"
)

// The TXT registry's rules (names, strings, encryption) are
// events/registry's; here is how the planner is configured to apply them.

// txtRegistry is the registry configuration planName reads: immutable once
// built, so planName stays a pure function.
type txtRegistry struct {
	noop              bool     // --registry=noop: no ownership records; everything is ours
	registry.Settings          // the owner id, and where ownership records live (names)
	migrate           string   // --migrate-from-txt-owner: taken as ours, rewritten
	adopt             []string // --txt-adopt-owner: taken over, rewritten
	names             registry.Names
	aesKey            []byte // set: encrypted strings are read
	encrypt           bool   // write encrypted strings
	managed           []string
	excluded          []string
}

// virtual says whether ownership records stay off DNS (--registry=crd: the
// applier keeps them in DNSRecords), so that DNS's limits on names do not
// apply to them.
func (r *txtRegistry) virtual() bool { return r.Registry == registry.RegistryCRD }

// role is how we treat a registry string's owner.
type role int

const (
	roleForeign  role = iota // someone else's: never touched
	roleMine                 // ours
	roleTakeover             // --migrate-from-txt-owner or --txt-adopt-owner: ours, to be rewritten
)

func (r *txtRegistry) role(owner string) role {
	switch {
	case owner == r.OwnerID:
		return roleMine
	case r.migrate != "" && owner == r.migrate, slices.Contains(r.adopt, owner):
		return roleTakeover
	}
	return roleForeign
}

// parse reads a TXT string as a registry string, decrypting it first when a
// key is set; a string that does not decrypt is read as plain text, as
// ExternalDNS does (a zone may hold both).
func (r *txtRegistry) parse(txt string) (registry.Labels, bool) {
	return registry.Read(txt, r.aesKey)
}

// render writes our string for the registry record at name.
func (r *txtRegistry) render(l registry.Labels, name string) string {
	plain := l.Format()
	if !r.encrypt {
		return plain
	}
	s, err := registry.Encrypt(plain, r.aesKey, registry.SyntheticNonce(r.aesKey, name, plain))
	if err != nil {
		// The key was validated at start: AES-256 with a 12-byte nonce
		// cannot fail.
		panic("txt registry encryption: " + err.Error())
	}
	return s
}
