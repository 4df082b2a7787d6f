package gloo

import (
	"flag"
	"slices"
	"testing"
)

// --gloo-namespace is repeatable and takes comma-separated values, as
// ExternalDNS' kingpin flag; none given reads gloo-system.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"gloo-system"}},
		{[]string{"--gloo-namespace=a"}, []string{"a"}},
		{[]string{"--gloo-namespace=b", "--gloo-namespace=a,b"}, []string{"a", "b"}},
	} {
		var f Flags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := namespacesOf(f); !slices.Equal(got, tc.want) {
			t.Errorf("%v: namespaces %v, want %v", tc.args, got, tc.want)
		}
	}
}
