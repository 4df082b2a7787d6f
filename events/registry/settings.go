package registry

// Settings are the ownership settings, ExternalDNS' flags: --txt-owner-id,
// --txt-prefix, --txt-suffix and --txt-wildcard-replacement. The planner
// writes with them; the status writer and the portal read with them.
// With no OwnerID a reader cannot tell another owner's record from ours.
// Registry is --registry: with RegistryCRD the ownership records are the
// applier's virtual ones, at fixed names (crd.go).
type Settings struct {
	OwnerID             string
	Prefix              string
	Suffix              string
	WildcardReplacement string
	Registry            string
}

// Names is where these settings put ownership records.
func (s Settings) Names() Names {
	if s.Registry == RegistryCRD {
		return CRDNames()
	}
	return NewNames(s.Prefix, s.Suffix, s.WildcardReplacement)
}
