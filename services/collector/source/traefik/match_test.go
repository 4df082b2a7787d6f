package traefik

import (
	"slices"
	"testing"
)

// The hosts ExternalDNS' expressions find in Traefik's rule syntax.
func TestMatchHosts(t *testing.T) {
	for rule, want := range map[string][]string{
		"Host(`a.example.org`)":                                     {"a.example.org"},
		"Host(`a.example.org`, `b.example.org`)":                    {"a.example.org", "b.example.org"},
		"Host(`a.example.org`) || HostHeader(`b.example.org`)":      {"a.example.org", "b.example.org"},
		"HostSNI(`db.example.org`)":                                 {"db.example.org"},
		"Host ( `spaced.example.org` )":                             {"spaced.example.org"},
		"Host(`a.example.org`) && PathPrefix(`/api`)":               {"a.example.org"},
		"HostRegexp(`^.+\\.example\\.org$`)":                        nil,
		"HostSNIRegexp(`^db\\.example\\.org$`)":                     nil,
		"Host(`*`)":                                                 nil,
		"HostSNI(`*`)":                                              nil,
		"PathPrefix(`/`)":                                           nil,
		"":                                                          nil,
		"Host(`a.example.org`) || Host(`a.example.org`)":            {"a.example.org", "a.example.org"},
		"!Host(`not.example.org`)":                                  {"not.example.org"},
		"Host(`x.example.org`) || HostRegexp(`^y\\.example\\.org`)": {"x.example.org"},
	} {
		if got := matchHosts(rule); !slices.Equal(got, want) {
			t.Errorf("matchHosts(%q) = %q, want %q", rule, got, want)
		}
	}
}
