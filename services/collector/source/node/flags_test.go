package node

import (
	"flag"
	"testing"
)

// The ExternalDNS spellings of the flags set the inverted fields.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Flags
	}{
		{nil, Flags{}},
		{[]string{"--exclude-unschedulable=false"}, Flags{IncludeUnschedulable: true}},
		{[]string{"--exclude-unschedulable"}, Flags{}},
		{[]string{"--no-exclude-unschedulable"}, Flags{IncludeUnschedulable: true}},
		{[]string{"--expose-internal-ipv6=false"}, Flags{HideInternalIPv6: true}},
		{[]string{"--expose-internal-ipv6=true"}, Flags{}},
	} {
		var f Flags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if f != tc.want {
			t.Errorf("%v: got %+v, want %+v", tc.args, f, tc.want)
		}
	}
	var f Flags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f.RegisterFlags(fs)
	if err := fs.Parse([]string{"--exclude-unschedulable=maybe"}); err == nil {
		t.Error("--exclude-unschedulable=maybe accepted")
	}
}
