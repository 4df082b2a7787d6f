package traefik

import (
	"regexp"
	"strings"
)

// ExternalDNS reads hosts out of Traefik's rule syntax with two regular
// expressions, and so does this source, to find the same names: a
// Host, HostHeader or HostSNI matcher (not HostRegexp, HostSNIRegexp),
// then each backquoted value in its parentheses.
var (
	hostMatcher = regexp.MustCompile("(?:HostSNI|HostHeader|Host)\\s*\\(\\s*(`.*?`)\\s*\\)")
	hostValue   = regexp.MustCompile("`([^,`]+)`")
)

// matchHosts returns the hosts a match rule names, in order, without the
// catch-all "*".
func matchHosts(rule string) []string {
	var hosts []string
	for _, m := range hostMatcher.FindAllString(rule, -1) {
		for _, v := range hostValue.FindAllString(m, -1) {
			h := strings.Trim(v, "`")
			if h != "" && h != "*" {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}
