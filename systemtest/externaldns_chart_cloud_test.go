//go:build externaldns

package systemtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/cloudflare"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/moto"
)

// TestExternalDNSChartCloud runs zonestream, built with -tags externaldns,
// as ExternalDNS' chart deploys it for Route53 (moto) and Cloudflare (a
// fake of its API): the chart's arguments exactly, its env, its RBAC
// (runExternalDNSChart). What the cloud gives a pod is substituted:
//   - aws: IRSA's web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE,
//     injected by EKS) becomes moto's test credentials, and
//     AWS_ENDPOINT_URL points the SDK at moto instead of AWS;
//   - cloudflare: CLOUDFLARE_BASE_URL points cloudflare-go at the fake
//     (ExternalDNS has no flag for the API's address); the token comes
//     from the Secret as the chart's env has it.
func TestExternalDNSChartCloud(t *testing.T) {
	t.Run("aws", func(t *testing.T) {
		cluster := kube.StartT(t, externalDNSChart+"/crds")
		r53 := moto.Route53T(t)
		zoneID := r53.CreateZone(t, "example.com")
		env := map[string]string{}
		for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"} {
			env[k] = os.Getenv(k)
		}
		objects, deploy := renderExternalDNSChart(t, "external-dns-chart-aws.yaml", "")
		r := runExternalDNSChart(t, cluster, objects, deploy, nil, env)
		r.probesPass(t)
		annotatedService(t, cluster.Client, "web.example.com", "192.0.2.30")
		want := []string{"a-web.example.com TXT \"heritage=external-dns,external-dns/owner=my-cluster,external-dns/resource=service/default/web\"",
			"web.example.com A 192.0.2.30"}
		waitUntil(t, "web.example.com in Route53", 90*time.Second, func() error {
			got, err := r53.RecordSets(context.Background(), zoneID)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("the hosted zone holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			return err
		})
	})

	t.Run("cloudflare", func(t *testing.T) {
		cluster := kube.StartT(t, externalDNSChart+"/crds")
		s := cloudflare.StartT(t, "example.net")
		objects, deploy := renderExternalDNSChart(t, "external-dns-chart-cloudflare.yaml", "")
		r := runExternalDNSChart(t, cluster, objects, deploy, map[string]string{"cloudflare-api-key/apiKey": s.Token},
			map[string]string{"CLOUDFLARE_BASE_URL": s.URL})
		r.probesPass(t)
		serviceBecomesRecord(t, cluster.Client, s, "web.example.net", "192.0.2.40", "my-cluster")
	})
}
