// Package flagtest checks how a source's flags parse, for the sources'
// tests.
package flagtest

import (
	"flag"
	"testing"
)

// Flags is a source's Flags type F, by its pointer type.
type Flags[F any] interface {
	*F
	RegisterFlags(fs *flag.FlagSet)
}

// Case is a command line and the flags it should give.
type Case[F any] struct {
	Args []string
	Want F
}

// Parse registers the flags of a zero F on a new FlagSet and parses args.
func Parse[F any, P Flags[F]](args []string) (F, error) {
	var f F
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	P(&f).RegisterFlags(fs)
	err := fs.Parse(args)
	return f, err
}

// Check parses every case's command line and compares the flags with
// the case's.
func Check[F comparable, P Flags[F]](t *testing.T, cases []Case[F]) {
	t.Helper()
	for _, tc := range cases {
		f, err := Parse[F, P](tc.Args)
		if err != nil {
			t.Fatalf("%v: %v", tc.Args, err)
		}
		if f != tc.Want {
			t.Errorf("%v: got %+v, want %+v", tc.Args, f, tc.Want)
		}
	}
}
