// Package webhook speaks ExternalDNS' webhook provider protocol both ways:
// Provider is a zonestream provider that drives any ExternalDNS webhook
// provider (a sidecar on http://localhost:8888), and NewServer serves any
// zonestream provider over the same protocol, so that ExternalDNS itself
// (or Provider) can use it.
//
// The protocol (ExternalDNS provider/webhook, media type
// application/external.dns.webhook+json;version=1):
//
//	GET  /                 200, the domain filter (negotiation)
//	GET  /records          200, []Endpoint
//	POST /records          Changes -> 204
//	POST /adjustendpoints  []Endpoint -> 200, []Endpoint
//
// It knows no zones and no preconditions; see README.md for how both are
// supplied.
package webhook

import (
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// MediaType is the protocol's media type and version, sent as Accept and
// Content-Type, exactly as ExternalDNS writes it.
const MediaType = "application/external.dns.webhook+json;version=1"

const (
	mediaTypeName    = "application/external.dns.webhook+json"
	mediaTypeVersion = "1"
)

// Paths of the protocol.
const (
	PathNegotiate       = "/"
	PathRecords         = "/records"
	PathAdjustEndpoints = "/adjustendpoints"
	PathHealthz         = "/healthz"
)

// checkMediaType reports whether a Content-Type header names the
// protocol's media type at version 1 (parameters compared as MIME does:
// case-insensitive names, optional blanks).
func checkMediaType(header string) bool {
	mt, params, err := mime.ParseMediaType(header)
	return err == nil && mt == mediaTypeName && params["version"] == mediaTypeVersion
}

// Changes is ExternalDNS' plan.Changes on the wire. ExternalDNS 0.14 and
// later write the lower-camel-case names below; older versions wrote the
// Go field names ("Create", "UpdateOld", ...), which encoding/json also
// accepts when decoding, as its field matching ignores case.
type Changes struct {
	Create    []events.Endpoint `json:"create,omitempty"`
	UpdateOld []events.Endpoint `json:"updateOld,omitempty"`
	UpdateNew []events.Endpoint `json:"updateNew,omitempty"`
	Delete    []events.Endpoint `json:"delete,omitempty"`
}

// Len is the number of endpoints in c.
func (c Changes) Len() int {
	return len(c.Create) + len(c.UpdateOld) + len(c.UpdateNew) + len(c.Delete)
}

// DomainFilter is ExternalDNS' endpoint.DomainFilter as it is serialized
// in negotiation: either include/exclude lists of domains or two regular
// expressions (which take precedence, as in ExternalDNS).
type DomainFilter struct {
	Include      []string `json:"include,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	RegexInclude string   `json:"regexInclude,omitempty"`
	RegexExclude string   `json:"regexExclude,omitempty"`

	regexInclude, regexExclude *regexp.Regexp
}

// UnmarshalJSON decodes the filter and compiles its expressions.
func (f *DomainFilter) UnmarshalJSON(b []byte) error {
	type plain DomainFilter
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*f = DomainFilter(p)
	return f.compile()
}

func (f *DomainFilter) compile() (err error) {
	f.regexInclude, f.regexExclude = nil, nil
	if f.RegexInclude != "" {
		if f.regexInclude, err = regexp.Compile(f.RegexInclude); err != nil {
			return err
		}
	}
	if f.RegexExclude != "" {
		if f.regexExclude, err = regexp.Compile(f.RegexExclude); err != nil {
			return err
		}
	}
	return nil
}

// IsEmpty reports whether the filter matches every domain.
func (f *DomainFilter) IsEmpty() bool {
	return len(f.Include) == 0 && len(f.Exclude) == 0 && f.RegexInclude == "" && f.RegexExclude == ""
}

// Match reports whether the filter admits name, with ExternalDNS'
// semantics: with a regular expression set, regexInclude must match (when
// set) and regexExclude must not; otherwise name must be (below) an
// include entry (an entry starting with "." admits only names below it)
// when there are any, and must not be (below) an exclude entry.
func (f *DomainFilter) Match(name string) bool {
	name = events.NormalizeName(name)
	if f.RegexInclude != "" || f.RegexExclude != "" {
		if f.regexInclude == nil && f.regexExclude == nil {
			if f.compile() != nil {
				return false
			}
		}
		if f.regexInclude != nil && !f.regexInclude.MatchString(name) {
			return false
		}
		return f.regexExclude == nil || !f.regexExclude.MatchString(name)
	}
	return matchDomains(f.Include, name, true) && !matchDomains(f.Exclude, name, false)
}

func matchDomains(filters []string, name string, empty bool) bool {
	n := 0
	for _, fl := range filters {
		fl = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(fl), "."))
		if fl == "" {
			continue
		}
		n++
		if strings.HasPrefix(fl, ".") {
			if strings.HasSuffix(name, fl) {
				return true
			}
		} else if name == fl || strings.HasSuffix(name, "."+fl) {
			return true
		}
	}
	if n == 0 {
		return empty
	}
	return false
}

// errorBody is the JSON body of an error answer of NewServer. Reason is
// "stale" when the provider's state no longer matched the changes, so
// that Provider tells a stale apply from a failure.
type errorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason,omitempty"`
}

// Reasons in errorBody.
const (
	ReasonStale     = "stale"
	ReasonRejected  = "rejected"
	ReasonTransient = "transient"
	ReasonBadInput  = "bad-request"
)

// Validate checks that the filter's regular expressions compile.
func (f *DomainFilter) Validate() error {
	if err := f.compile(); err != nil {
		return fmt.Errorf("webhook: domain filter: %w", err)
	}
	return nil
}
