package gateway

import (
	"net/netip"
	"strings"

	"github.com/zonestream/zonestream/services/collector/source"
)

// validHost reports whether h is a hostname a route or listener may carry:
// empty (no hostname), or a DNS name, possibly with a leading "*." label,
// that is not an IP address.
func validHost(h string) bool {
	if h == "" {
		return true
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return false
	}
	return source.ValidateHostname(h, true) == nil
}

// matchHost narrows a listener hostname and a route hostname to the names
// both accept, as the Gateway API defines it: an empty hostname accepts
// anything; "*.example.org" accepts every name below example.org (one
// label or more) but not example.org itself. It returns the more specific
// of the two, or false when they do not overlap. Both are lower-cased.
func matchHost(listener, route string) (string, bool) {
	a, b := strings.ToLower(listener), strings.ToLower(route)
	if !validHost(a) || !validHost(b) {
		return "", false
	}
	if a == "" {
		return b, true
	}
	if b == "" || a == b {
		return a, true
	}
	// Make a the shorter (the wildcard candidate); at equal length a
	// wildcard on b's side goes first.
	if len(b) < len(a) || (len(a) == len(b) && strings.HasPrefix(b, "*.")) {
		a, b = b, a
	}
	if strings.HasPrefix(a, "*.") && strings.HasSuffix(b, a[1:]) {
		return b, true
	}
	return "", false
}
