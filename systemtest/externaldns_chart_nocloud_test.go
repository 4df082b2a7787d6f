//go:build !externaldns

package systemtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExternalDNSChartCloud, in the default build (no cloud SDK linked):
// a release of ExternalDNS' chart for aws or cloudflare, run with the
// container's arguments, stops at start with an error that names the
// provider and the build that has it. With -tags externaldns the same
// test runs them against moto and a fake of Cloudflare's API
// (externaldns_chart_cloud_test.go).
func TestExternalDNSChartCloud(t *testing.T) {
	for _, tc := range []struct{ values, provider string }{
		{"external-dns-chart-aws.yaml", "aws"},
		{"external-dns-chart-cloudflare.yaml", "cloudflare"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			_, deploy := renderExternalDNSChart(t, tc.values, "")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// No kube-apiserver is needed: the applier is built, and
			// refused, before anything is reached; the collector only
			// wants a kubeconfig that parses.
			kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
			if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append(deploy.Spec.Template.Spec.Containers[0].Args, "--kubeconfig="+kubeconfig,
				"--metrics-address=127.0.0.1:0", "--nats-listen=127.0.0.1:0", "--portal-listen=127.0.0.1:0")
			cmd := exec.CommandContext(ctx, binary, args...)
			cmd.Env = []string{"HOME=/dev/null/home", "TMPDIR=/dev/null/tmp"}
			out, err := cmd.CombinedOutput()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("zonestream did not stop at start (%v):\n%s", err, out)
			}
			for _, want := range []string{`--provider "` + tc.provider + `"`, "-tags externaldns"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("the error does not say %s:\n%s", want, out)
				}
			}
		})
	}
}

// unreachableKubeconfig names an apiserver nobody listens on.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: x}}]
`
