package externaldns

import (
	"runtime/debug"
	"slices"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"
)

// Flag is one flag of the linked ExternalDNS' command line.
type Flag struct {
	Name    string
	Boolean bool
}

// Reference is what the linked ExternalDNS accepts, read from its own
// command line (pkg/apis/externaldns.App): every flag, every --source and
// every --provider value. Tests compare zonestream to it, so that a newer
// ExternalDNS shows up as a failing test rather than a user's surprise.
type Reference struct {
	Version   string
	Flags     []Flag
	Sources   []string
	Providers []string
}

// Linked returns the Reference of the ExternalDNS this build links.
func Linked() Reference {
	app := edns.App(edns.NewConfig())
	r := Reference{Version: linkedVersion(), Sources: slices.Clone(edns.AllowedSources), Providers: slices.Clone(edns.ProviderNames)}
	for _, f := range app.Model().Flags {
		if f.Hidden || f.Name == "help" { // kingpin's own (help, help-long, help-man)
			continue
		}
		r.Flags = append(r.Flags, Flag{Name: f.Name, Boolean: f.IsBoolFlag()})
	}
	return r
}

// linkedVersion is the version of sigs.k8s.io/external-dns in the build
// (its own Version is set only by its Makefile).
func linkedVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/external-dns" {
				return m.Version
			}
		}
	}
	return "unknown"
}
