package stage

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// SecretVar defines a secret flag, --name, and its twin --name-file. The
// flag itself stays for ExternalDNS command lines, but a flag's value shows
// in ps and in the Pod spec: the file (a mounted Secret) or
// $EXTERNAL_DNS_<NAME> (an env var from a Secret) keep it out of both.
// Secrets are never logged; an error about one names the flag, never the
// value.
func SecretVar(fs *flag.FlagSet, p *string, name, usage string) {
	fs.StringVar(p, name, "", usage+"; prefer --"+name+"-file or $"+EnvName(name)+": a flag's value shows in ps")
	fs.Var(&secretFile{secret: p, name: name}, name+"-file", "file holding --"+name+" (a trailing newline is dropped)")
}

// secretFile is the value of a --<secret>-file flag: the path, read by
// Parse once every flag is known, so that the file and the secret given
// another way can be told apart.
type secretFile struct {
	secret *string
	name   string
	path   string
}

func (s *secretFile) String() string {
	if s == nil {
		return ""
	}
	return s.path
}

func (s *secretFile) Set(path string) error {
	s.path = path
	return nil
}

// readSecretFiles reads every --<secret>-file given into its secret; the
// secret given both ways is an error, not a silent choice. Every secret
// set, whichever way, is remembered (RememberSecret).
func readSecretFiles(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		sf, ok := f.Value.(*secretFile)
		if !ok || err != nil {
			return
		}
		if sf.path == "" {
			RememberSecret(*sf.secret) // from the flag or $EXTERNAL_DNS_<FLAG>
			return
		}
		if given[sf.name] {
			err = fmt.Errorf("--%s and --%s-file both set: give one", sf.name, sf.name)
			return
		}
		b, rerr := os.ReadFile(sf.path)
		if rerr != nil {
			err = fmt.Errorf("--%s-file: %w", sf.name, rerr)
			return
		}
		*sf.secret = strings.TrimRight(string(b), "\r\n")
		RememberSecret(*sf.secret)
	})
	return err
}

// SecretFlags are the names of fs's secret flags (SecretVar), their
// -file twins among them: the flags whose values are credentials.
func SecretFlags(fs *flag.FlagSet) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		if sf, ok := f.Value.(*secretFile); ok {
			names[sf.name], names[f.Name] = true, true
		}
	})
	return names
}
