// Package registry is ExternalDNS' TXT ownership registry, in one place:
// where ownership records live (names.go), what their strings say
// (labels.go), how they are encrypted (crypto.go) and the settings that
// choose among these (settings.go). The planner writes it; the collector's
// status writer and the portal read it; all of them through this package,
// so that the three can never disagree on whose a record is.
//
// It lives beside events rather than in a service because services share
// only events and stage, and it is part of no stream's contract.
package registry
