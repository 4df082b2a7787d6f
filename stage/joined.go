package stage

import "strings"

// JoinedString is a string flag that ExternalDNS takes repeated, joining
// the values: each occurrence is appended to *P after Sep. Unlike
// StringList it never splits a value, which may hold Sep itself (a Go
// template with a comma in an action).
type JoinedString struct {
	P   *string
	Sep string
}

func (j JoinedString) String() string {
	if j.P == nil {
		return ""
	}
	return *j.P
}

// Set appends one occurrence; an empty one adds nothing.
func (j JoinedString) Set(v string) error {
	switch {
	case strings.TrimSpace(v) == "":
	case *j.P == "":
		*j.P = v
	default:
		*j.P += j.Sep + v
	}
	return nil
}
