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

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
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
// expressions (which take precedence, as in ExternalDNS). What it admits
// is events/domains' rule, the planner's and the portal's.
type DomainFilter struct {
	Include      []string `json:"include,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	RegexInclude string   `json:"regexInclude,omitempty"`
	RegexExclude string   `json:"regexExclude,omitempty"`

	filter   domains.Filter
	compiled bool
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
	f.filter, err = f.build()
	f.compiled = err == nil
	return err
}

func (f *DomainFilter) build() (domains.Filter, error) {
	return domains.New(domains.Settings{Include: f.Include, Exclude: f.Exclude,
		Regex: f.RegexInclude, RegexExclusion: f.RegexExclude})
}

// IsEmpty reports whether the filter matches every domain.
func (f *DomainFilter) IsEmpty() bool {
	return len(f.Include) == 0 && len(f.Exclude) == 0 && f.RegexInclude == "" && f.RegexExclude == ""
}

// Match reports whether the filter admits name (domains.Filter.Match); a
// filter whose expressions do not compile admits nothing. A filter built
// as a literal is compiled here, for this call only, so that concurrent
// calls never write to it.
func (f *DomainFilter) Match(name string) bool {
	filter := f.filter
	if !f.compiled {
		var err error
		if filter, err = f.build(); err != nil {
			return false
		}
	}
	return filter.Match(name)
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
