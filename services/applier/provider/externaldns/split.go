package externaldns

import (
	"flag"
	"strings"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"
)

// flagKind says whether a flag set knows a flag and whether it is a
// boolean (one that takes no separate value).
type flagKind func(name string) (known, boolean bool)

// goFlags is what a Go flag set knows.
func goFlags(fs *flag.FlagSet) flagKind {
	return func(name string) (bool, bool) {
		f := fs.Lookup(name)
		if f == nil {
			return false, false
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		return true, ok && b.IsBoolFlag()
	}
}

// externalDNSFlags is what ExternalDNS' command line knows, --no-<bool>
// (kingpin's negation) included.
func externalDNSFlags() flagKind {
	known := map[string]bool{}
	for _, f := range edns.App(edns.NewConfig()).Model().Flags {
		known[f.Name] = f.IsBoolFlag()
		if f.IsBoolFlag() {
			known["no-"+f.Name] = true
		}
	}
	return func(name string) (bool, bool) {
		b, ok := known[name]
		return ok, b
	}
}

// split cuts one command line into ours and ExternalDNS': a flag goes to
// each side that knows it (--provider, --interval, --metrics-address,
// --log-level go to both), with its value; a flag neither knows, or an
// argument that is no flag, goes to ours, whose parser then names it.
func split(args []string, ours, theirs flagKind) (o, t []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			o = append(o, args[i:]...)
			break
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		knownO, boolO := ours(name)
		knownT, boolT := theirs(name)
		group := []string{a}
		if !inline && (knownO && !boolO || knownT && !boolT) && i+1 < len(args) {
			group = append(group, args[i+1])
			i++
		}
		if knownO || !knownT {
			o = append(o, group...)
		}
		if knownT {
			t = append(t, group...)
		}
	}
	return o, t
}
