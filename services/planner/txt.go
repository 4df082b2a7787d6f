package planner

import (
	"github.com/zonestream/zonestream/events"
)

// TXT records users want (an SPF policy, a verification token) are
// managed like any other type when TXT is in --managed-record-types, as
// ExternalDNS does. Their ownership record is the new-format txt-<name>
// (at the apex: the TXT at the name itself, with an explicit
// record-type/TXT field). The user's strings and ownership strings may
// share one RRset (the old format, the apex): a registry string is never
// taken for user data, nor user data for a registry string, and a change
// to one leaves the other as it is.

// userPart is the user's part of a TXT RRset: its strings that are not
// registry strings; nil when there are none.
func (reg *txtRegistry) userPart(txt *events.Endpoint) *events.Endpoint {
	if txt == nil {
		return nil
	}
	var user []string
	for _, t := range txt.Targets {
		if _, ok := reg.parse(t); !ok {
			user = append(user, t)
		}
	}
	if len(user) == 0 {
		return nil
	}
	out := *txt
	out.Targets = user
	return &out
}

// registryStringIn returns a string of a wanted TXT that reads as an
// ownership record, or "".
func (reg *txtRegistry) registryStringIn(ep events.Endpoint) string {
	for _, t := range ep.Targets {
		if _, ok := reg.parse(t); ok {
			return t
		}
	}
	return ""
}
