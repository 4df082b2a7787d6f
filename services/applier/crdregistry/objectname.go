package crdregistry

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// notNameChars are the characters an object name's readable part cannot hold.
var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// ObjectName is the DNSRecord's name for a record set, exactly as ExternalDNS
// names it (registry/crd recordObjectName), so that both find the same
// object: the DNS name with dashes for readability, then "-" and 8 hex
// characters of sha256("name/TYPE/set-id") so that names alike once dashed
// (sub.example.io, sub-example.io; two set identifiers) never collide; at
// most 253 characters (RFC 1123).
func ObjectName(k events.RRsetKey) string {
	name := strings.TrimSuffix(strings.ToLower(k.DNSName), ".")
	sum := sha256.Sum256([]byte(name + "/" + strings.ToUpper(k.RecordType) + "/" + k.SetIdentifier))
	suffix := fmt.Sprintf("-%x", sum[:4])
	readable := strings.Trim(notNameChars.ReplaceAllString(name, "-"), "-")
	if limit := 253 - len(suffix); len(readable) > limit {
		readable = strings.Trim(readable[:limit], "-")
	}
	if readable == "" {
		readable = "record"
	}
	return readable + suffix
}
