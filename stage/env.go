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

// Parse parses args; then every flag not on the command line takes its
// value from $EXTERNAL_DNS_<FLAG> when that is set (the command line wins),
// and every secret given as a file (SecretVar) is read.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
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
