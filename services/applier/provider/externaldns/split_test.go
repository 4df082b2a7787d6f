package externaldns

import (
	"flag"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// One command line feeds two parsers: each flag goes, with its value, to
// each side that knows it; what neither knows goes to ours, which then
// refuses it.
func TestSplitArgs(t *testing.T) {
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	var opts stage.Options
	opts.RegisterFlags(fs)
	ApplierStage().Standalone(fs)
	ours, theirs := split([]string{
		"--nats-url", "nats://127.0.0.1:4222", "--provider=aws", "--aws-zone-type", "public",
		"--aws-batch-change-size=100", "--aws-evaluate-target-health", "--no-aws-prefer-cname",
		"--interval", "2m", "--domain-filter", "example.org", "--provider-name=route53", "--no-such-flag", "x",
	}, goFlags(fs), externalDNSFlags())
	wantOurs := []string{"--nats-url", "nats://127.0.0.1:4222", "--provider=aws", "--interval", "2m",
		"--provider-name=route53", "--no-such-flag", "x"}
	wantTheirs := []string{"--provider=aws", "--aws-zone-type", "public", "--aws-batch-change-size=100",
		"--aws-evaluate-target-health", "--no-aws-prefer-cname", "--interval", "2m", "--domain-filter", "example.org"}
	if !slices.Equal(ours, wantOurs) {
		t.Errorf("ours %q\nwant %q", ours, wantOurs)
	}
	if !slices.Equal(theirs, wantTheirs) {
		t.Errorf("theirs %q\nwant %q", theirs, wantTheirs)
	}
}
