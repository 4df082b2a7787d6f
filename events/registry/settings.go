package registry

// Settings are the ownership settings, ExternalDNS' flags: --txt-owner-id,
// --txt-prefix, --txt-suffix and --txt-wildcard-replacement. The planner
// writes with them; the status writer and the portal read with them.
// With no OwnerID a reader cannot tell another owner's record from ours.
type Settings struct {
	OwnerID             string
	Prefix              string
	Suffix              string
	WildcardReplacement string
}

// Names is where these settings put ownership records.
func (s Settings) Names() Names {
	return NewNames(s.Prefix, s.Suffix, s.WildcardReplacement)
}
