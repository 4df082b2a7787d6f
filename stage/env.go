package stage

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// EnvPrefix starts the environment variable of every flag: ExternalDNS
// reads each of its flags from EXTERNAL_DNS_<FLAG_IN_UPPER_SNAKE>, and
// users moving over keep their Deployments' env as it is.
const EnvPrefix = "EXTERNAL_DNS_"

// EnvName is the environment variable that sets flag name:
// rfc2136-tsig-secret -> EXTERNAL_DNS_RFC2136_TSIG_SECRET.
func EnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Parse parses args, where --no-<flag> (kingpin's negation, which
// ExternalDNS' command lines use) is --<flag>=false for a boolean flag of
// fs; then every flag not on the command line takes its value from
// $EXTERNAL_DNS_<FLAG> when that is set (the command line wins), and every
// secret given as a file (SecretVar) is read.
//
// -h/--help prints the help and returns flag.ErrHelp; a flag that does not
// parse is a UsageError (ParseFlags).
func Parse(fs *flag.FlagSet, args []string) error {
	if h := helpAsked(args); h != "" {
		return ParseFlags(fs, []string{"--" + h})
	}
	if err := ParseFlags(fs, negations(fs, args)); err != nil {
		return err
	}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if onCommandLine[f.Name] {
			return
		}
		env := EnvName(f.Name)
		v, ok := os.LookupEnv(env)
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			// The value is left out: it may be a secret.
			errs = append(errs, fmt.Errorf("$%s: not a valid value for --%s", env, f.Name))
		}
	})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return readSecretFiles(fs)
}

// negations rewrites each --no-<flag> of args to --<flag>=false when
// <flag> is a boolean flag of fs and no-<flag> is not a flag of its own.
// It reads args as fs.Parse does: up to the first argument that is no flag,
// or "--", skipping the value of a flag that takes one.
func negations(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		name, _, inline := strings.Cut(a[len(dashes):], "=")
		if f := fs.Lookup(name); f != nil {
			out = append(out, a)
			if !inline && !isBoolFlag(f) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if negated, ok := strings.CutPrefix(name, "no-"); ok && !inline {
			if f := fs.Lookup(negated); f != nil && isBoolFlag(f) {
				out = append(out, dashes+negated+"=false")
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
