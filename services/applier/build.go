package applier

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// Build builds name, one of zonestream's own providers (NativeProvider),
// from its flags as a DNSProvider object declares them (--rfc2136-host=...),
// parsed by the applier's own flag definitions on a flag set of their own:
// the same names, defaults and checks as on the command line. Every
// secret flag's value is remembered for redaction before anything can
// fail with it.
func Build(name string, args []string, opts provider.Options) (provider.Provider, error) {
	build, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("provider %q is not one of zonestream's own (%s)", name, providerNames)
	}
	var cfg Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.RegisterFlags(fs)
	secrets := stage.SecretFlags(fs)
	for _, arg := range args {
		flagName, value, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if secrets[flagName] {
			stage.RememberSecret(value)
		}
	}
	if err := fs.Parse(args); err != nil {
		// flag's errors quote the value: redacted, it may be a secret.
		return nil, errors.New(provider.Redact(err.Error()))
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("not a flag: %q", fs.Arg(0))
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = cfg.DefaultTTL
	}
	opts = opts.WithDefaults()
	return build(cfg, opts)
}
