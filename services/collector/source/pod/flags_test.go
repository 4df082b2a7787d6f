package pod

import (
	"flag"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Flags
	}{
		{nil, Flags{}},
		{[]string{"--ignore-non-host-network-pods=false"}, Flags{IncludeNonHostNetworkPods: true}},
		{[]string{"--ignore-non-host-network-pods", "--pod-source-domain", "pods.example.org"}, Flags{SourceDomain: "pods.example.org"}},
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
	if _, err := New(Options{Flags: Flags{SourceDomain: "bad..domain"}}); err == nil {
		t.Error("invalid --pod-source-domain accepted")
	}
}
