package systemtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/kube"
)

const chart = "../deploy/helm/zonestream"

// goTool finds a command hack/test.sh builds into the cache: $env, else
// PATH, else ~/.cache/zonestream/tools.
func goTool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	cache := os.Getenv("ZS_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(base, "zonestream")
	}
	p := filepath.Join(cache, "tools", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no %s on PATH, in $%s or in %s: hack/tools.sh builds it", name, env, p)
	}
	return p
}

// command runs name with args and returns its output, failing the test
// unless it succeeds.
func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestHelmChart lints the chart, renders it for the ways it is installed
// (the all-in-one, alone or from ExternalDNS' values files; distributed on
// the bundled NATS with the users the chart makes, on an external NATS with
// .creds and another provider, with no users), has a real kube-apiserver
// validate every object (server-side dry run), and each container's
// arguments by its own flag parsing; values the chart does not know, or
// of the wrong type, are refused.
func TestHelmChart(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is needed to validate the chart: ", err)
	}
	command(t, helm, "lint", "--strict", chart, "--set", "domainFilters={example.org}")
	command(t, helm, "lint", "--strict", chart, "--set", "mode=distributed")
	if b, c := readFile(t, "../deploy/crds/dnsendpoint.yaml"), readFile(t, chart+"/crds/dnsendpoint.yaml"); b != c {
		t.Error("the chart's DNSEndpoint CRD differs from deploy/crds/dnsendpoint.yaml: copy it over")
	}
	// The DNSRecord CRD is ExternalDNS' own, which the CRD registry's tests install.
	if b, c := readFile(t, "../deploy/crds/dnsrecord.yaml"), readFile(t, chart+"/crds/dnsrecord.yaml"); b != c {
		t.Error("the chart's DNSRecord CRD differs from deploy/crds/dnsrecord.yaml: copy it over")
	}
	if b, e := readFile(t, "../deploy/crds/dnsrecord.yaml"), readFile(t, "../services/applier/crdregistry/testdata/dnsrecords.externaldns.k8s.io.yaml"); !strings.HasSuffix(b, e) {
		t.Error("deploy/crds/dnsrecord.yaml is not ExternalDNS' DNSRecord CRD the CRD registry is tested with")
	}

	cluster := kube.StartT(t)
	command(t, kubectl, "--kubeconfig", cluster.Kubeconfig, "create", "namespace", "zonestream")
	const edns = "testdata/external-dns-chart/"
	for _, tc := range []struct {
		name   string
		values string // a values file's text, or "@path" of one
		set    []string
		inbox  map[string]string // stage -> --nats-inbox-prefix
		// natsURL: the stages' --nats-url; empty: the all-in-one.
		natsURL string
		absent  []string // kinds the release must not hold
		present []string // kinds it must hold
		stages  []string // the stages it runs, when not all
		// applier: what the applier's pod spec must hold (a cloud
		// provider's identity and credentials), as "key=value" lines.
		applier []string
		// args: arguments the all-in-one (or the applier) must have.
		args []string
	}{
		{name: "all-in-one by default", values: "provider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org}}, secrets: {rfc2136: {rfc2136-tsig-secret: {name: tsig, key: secret}}}}",
			present: []string{"PersistentVolumeClaim", "ClusterRole"}, absent: []string{"StatefulSet", "PodDisruptionBudget", "Job"},
			args: []string{"--data-dir=/data", "--provider=rfc2136", "--rfc2136-host=ns1.example.org", "--rfc2136-tsig-secret-file=/etc/zonestream/secrets/rfc2136-tsig-secret"}},
		{name: "ExternalDNS' default values", values: "@" + edns + "values.yaml",
			present: []string{"PersistentVolumeClaim", "ClusterRole"}, args: []string{"--provider=aws", "--source=service", "--source=ingress", "--policy=upsert-only", "--registry=txt"}},
		{name: "the CRD registry in the all-in-one", values: "registry: crd\ntxtOwnerId: prod\nprovider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org}}}",
			present: []string{"Role", "RoleBinding", "ClusterRole"}, args: []string{"--registry=crd", "--txt-owner-id=prod"}},
		// The applier talks to Kubernetes: its service account, with a token.
		{name: "the CRD registry when distributed", values: "mode: distributed\nregistry: crd\ntxtOwnerId: prod\nnats: {credentials: {type: none}}\n" +
			"provider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org, rfc2136-insecure: true}}}\ndomainFilters: [example.org]",
			natsURL: "nats://zs-zonestream-nats:4222", present: []string{"Role", "RoleBinding"},
			applier: []string{"serviceAccount=zs-zonestream", "token=true", "arg=--registry=crd", "arg=--provider=rfc2136"}},
		{name: "ExternalDNS' webhook provider as a sidecar", values: "provider: {name: webhook, webhook: {image: {repository: example/dns-webhook, tag: v1}, args: [--port=8888]}}",
			args: []string{"--provider=webhook"}},
		{name: "ExternalDNS' ci values", values: "@" + edns + "ci/ci-values.yaml",
			present: []string{"PersistentVolumeClaim"}, args: []string{"--provider=inmemory", "--label-filter=foo=bar", "--policy=upsert-only"}},
		{name: "an ExternalDNS values file for AWS with IRSA", values: `
provider: aws
namespaced: true
env: [{name: AWS_DEFAULT_REGION, value: eu-west-1}]
serviceAccount:
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::123456789012:role/external-dns"}
domainFilters: [example.org]
regexDomainFilter: ""
managedRecordTypes: [A, AAAA, CNAME, TXT]
annotationPrefix: custom/
txtOwnerId: prod
txtPrefix: edns-
policy: sync
triggerLoopOnEvent: true
extraArgs: {aws-zone-type: public, aws-batch-change-size: 100}
extraVolumes: [{name: cfg, configMap: {name: aws-config}}]
extraVolumeMounts: [{name: cfg, mountPath: /etc/aws}]
podLabels: {team: dns}
persistence: {enabled: false}
secretConfiguration: {enabled: true, mountPath: /.aws, data: {credentials: "[default]"}}
`,
			present: []string{"Role", "RoleBinding", "Secret"}, absent: []string{"ClusterRole", "PersistentVolumeClaim"},
			args: []string{"--namespace=zonestream", "--provider=aws", "--managed-record-types=TXT", "--annotation-prefix=custom/",
				"--txt-owner-id=prod", "--txt-prefix=edns-", "--policy=sync", "--events", "--aws-zone-type=public", "--aws-batch-change-size=100"}},
		{name: "distributed on the bundled NATS with generated users", values: "mode: distributed\nprovider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org, rfc2136-insecure: true}}}\ndomainFilters: [example.org]",
			inbox:   map[string]string{"collector": "_INBOX.collector-default", "dedup": "_INBOX.dedup", "planner": "_INBOX.planner", "applier": "_INBOX.applier-rfc2136"},
			natsURL: "nats://zs-zonestream-nats:4222", present: []string{"StatefulSet", "Job", "Secret", "NetworkPolicy"}},
		{name: "external NATS with creds and pdns", values: `
mode: distributed
clusterName: prod-eu
domainFilters: [example.org, example.net]
txtEncryptAesKeySecret: {name: txt-key, key: aes}
collector: {replicas: 2}
provider:
  name: pdns
  args: {pdns: {pdns-server: "http://pdns:8081"}}
  secrets: {pdns: {pdns-api-key: {name: pdns, key: api-key}}}
nats:
  bundled: false
  url: nats://a:4222,nats://b:4222
  streamReplicas: 3
  credentials: {type: creds}
  tls: {secret: nats-ca}
`,
			inbox:   map[string]string{"collector": "_INBOX.collector-prod-eu", "applier": "_INBOX.applier-pdns"},
			natsURL: "nats://a:4222,nats://b:4222", absent: []string{"StatefulSet", "NetworkPolicy"}, present: []string{"Job"}},
		{name: "member cluster with a collector only", values: "mode: distributed\nclusterName: prod-us\nnats: {bundled: false, url: 'nats://bus.example:4222', credentials: {type: nkey}, ensureStreams: false}\n" +
			"dedup: {enabled: false}\nplanner: {enabled: false}\napplier: {enabled: false}\nportal: {enabled: false}",
			stages:  []string{"collector"},
			inbox:   map[string]string{"collector": "_INBOX.collector-prod-us"},
			natsURL: "nats://bus.example:4222", absent: []string{"StatefulSet", "NetworkPolicy", "Job"}},
		{name: "bundled NATS with no users", values: "mode: distributed\nprovider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org, rfc2136-insecure: true}}}\ndomainFilters: [example.org]\nnats: {credentials: {type: none}}",
			natsURL: "nats://zs-zonestream-nats:4222"},
		// A cloud provider's identity and credentials (any provider: this
		// test's zonestream is built without -tags externaldns).
		{name: "a cloud identity (IRSA) and a token from a Secret", values: `
mode: distributed
provider: {name: rfc2136, args: {rfc2136: {rfc2136-host: ns1.example.org, rfc2136-zone: example.org, rfc2136-insecure: true}}}
domainFilters: [example.org]
nats: {credentials: {type: none}}
applier:
  serviceAccountName: dns-writer
  env:
    - {name: AWS_REGION, value: eu-west-1}
    - {name: CF_API_TOKEN, valueFrom: {secretKeyRef: {name: cloudflare, key: api-token}}}
`, natsURL: "nats://zs-zonestream-nats:4222",
			applier: []string{"serviceAccount=dns-writer", "arg=--provider=rfc2136",
				"env=AWS_REGION=eu-west-1", "env=CF_API_TOKEN<-cloudflare/api-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			values := filepath.Join(dir, "values.yaml")
			if f, ok := strings.CutPrefix(tc.values, "@"); ok {
				values = f
			} else if err := os.WriteFile(values, []byte(tc.values), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"template", "zs", chart, "--namespace", "zonestream", "--include-crds", "-f", values}
			rendered := command(t, helm, args...)
			file := filepath.Join(dir, "rendered.yaml")
			if err := os.WriteFile(file, []byte(rendered), 0o600); err != nil {
				t.Fatal(err)
			}
			out := command(t, kubectl, "--kubeconfig", cluster.Kubeconfig, "apply", "--dry-run=server", "-f", file)
			if !strings.Contains(out, "customresourcedefinition.apiextensions.k8s.io/dnsendpoints.externaldns.k8s.io") {
				t.Errorf("the DNSEndpoint CRD is not in the release:\n%s", out)
			}
			kinds, seen, budgets := map[string]bool{}, map[string]bool{}, 0
			for _, doc := range strings.Split(rendered, "\n---\n") {
				var d appsv1.Deployment
				if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
					t.Fatalf("%v in\n%s", err, doc)
				}
				kinds[d.Kind] = true
				if d.Kind == "PodDisruptionBudget" {
					budgets++
				}
				if d.Kind != "Deployment" {
					continue
				}
				joined := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ") + " "
				if tc.natsURL == "" {
					checkAllInOne(t, tc.name, d)
					seen["allinone"] = true
					for _, a := range tc.args {
						if !strings.Contains(joined, a+" ") {
							t.Errorf("%s: the all-in-one is not given %s: %s", tc.name, a, joined)
						}
					}
					continue
				}
				name, elected := checkStageDeployment(t, tc.name, d)
				seen[name] = true
				// By default one replica works and one stands by.
				if r := d.Spec.Replicas; r == nil || *r != 2 || !elected {
					t.Errorf("%s: %s runs %v replicas, leader election %v: want 2, elected", tc.name, name, r, elected)
				}
				if name == "applier" && tc.applier != nil {
					if got := applierSpec(d); !slices.Equal(got, tc.applier) {
						t.Errorf("%s: the applier's pod holds\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.applier, "\n"))
					}
				}
				if !strings.Contains(joined, "--nats-url="+tc.natsURL+" ") {
					t.Errorf("%s: %s is not given --nats-url=%s: %s", tc.name, name, tc.natsURL, joined)
				}
				if want, ok := tc.inbox[name]; ok && !strings.Contains(joined, "--nats-inbox-prefix="+want+" ") {
					t.Errorf("%s: %s does not reply under its identity's inbox %s: %s", tc.name, name, want, joined)
				}
				if len(tc.inbox) == 0 && strings.Contains(joined, "--nats-inbox-prefix") {
					t.Errorf("%s: %s has an inbox prefix but no credentials: %s", tc.name, name, joined)
				}
			}
			want := tc.stages
			if tc.natsURL == "" {
				want = []string{"allinone"}
			} else if want == nil {
				for _, def := range cli.Stages() {
					want = append(want, def.Name)
				}
			}
			for _, name := range want {
				if !seen[name] {
					t.Errorf("%s: no Deployment runs the %s stage", tc.name, name)
				}
			}
			if len(seen) != len(want) {
				t.Errorf("%s: the release runs %v, want only %v", tc.name, seen, want)
			}
			if wantBudgets := len(want); tc.natsURL != "" && budgets != wantBudgets {
				t.Errorf("%s: %d disruption budgets for %d stages", tc.name, budgets, wantBudgets)
			}
			for _, k := range tc.absent {
				if kinds[k] {
					t.Errorf("%s: the release holds a %s", tc.name, k)
				}
			}
			for _, k := range tc.present {
				if !kinds[k] {
					t.Errorf("%s: the release holds no %s", tc.name, k)
				}
			}
		})
	}

	// Values the chart does not know, of the wrong type, or that cannot
	// work fail the rendering with a message, rather than being dropped.
	for _, set := range []string{
		"nats.credentials.type=token", "mode=distributed,nats.bundled=false", "nats.configSecret=x",
		"namespaced=zonestream", "applier.foo=1", "registry=aws-sd", "mode=both", "domainFilters=example.org",
		"serviceAccount.annotations=x", "mode=distributed,nats.bundled=false,nats.url=nats://a:4222,nats.credentials.type=password",
		"mode=distributed,nats.credentials.type=nkey", "clusterName=a.b",
		"provider.args.rfc2136.rfc2136-host=192.0.2.53", // provider.name is aws
	} {
		out, err := exec.Command(helm, "template", "zs", chart, "--set", set).CombinedOutput()
		if err == nil {
			t.Errorf("helm template --set %s rendered:\n%s", set, out)
		}
	}
}

// checkAllInOne checks the all-in-one's arguments by its own flag parsing.
func checkAllInOne(t *testing.T, source string, d appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	args := slices.Clone(c.Args)
	for _, secret := range secretFlags() {
		for _, a := range args {
			if strings.HasPrefix(a, "--"+secret+"=") {
				t.Errorf("%s passes %s as an argument: it shows in ps and the Pod spec", source, secret)
			}
		}
	}
	if r := d.Spec.Replicas; r == nil || *r != 1 {
		t.Errorf("%s: the all-in-one runs %v replicas, want 1 (its JetStream is its own)", source, r)
	}
	if slices.Contains(args, "--provider=webhook") {
		pod := d.Spec.Template.Spec
		if len(pod.Containers) != 2 || pod.Containers[1].Image != "example/dns-webhook:v1" {
			t.Errorf("%s: no webhook sidecar next to the all-in-one: %v", source, pod.Containers)
		}
	}
	standInMountedSecrets(t, d, args)
	if _, err := cli.NewAllInOne().Parse(args); err != nil {
		t.Errorf("%s: the all-in-one refuses its arguments: %v", source, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// applierSpec is what the applier's pod holds of a provider's identity
// and credentials: its ServiceAccount, its provider arguments and its
// environment (a value, or the Secret and key it comes from).
func applierSpec(d appsv1.Deployment) []string {
	pod := d.Spec.Template.Spec
	out := []string{"serviceAccount=" + pod.ServiceAccountName}
	if t := pod.AutomountServiceAccountToken; t != nil && *t {
		out = append(out, "token=true")
	}
	for _, a := range pod.Containers[0].Args {
		if strings.HasPrefix(a, "--provider=") || strings.HasPrefix(a, "--aws-") || strings.HasPrefix(a, "--registry=") {
			out = append(out, "arg="+a)
		}
	}
	for _, e := range pod.Containers[0].Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			out = append(out, "env="+e.Name+"<-"+r.SecretKeyRef.Name+"/"+r.SecretKeyRef.Key)
			continue
		}
		out = append(out, "env="+e.Name+"="+e.Value)
	}
	return out
}

// The chart's bundled NATS gives each identity the permissions of
// events/permissions.go, from a file generated from them (a chart cannot
// run Go): its cluster and provider are placeholders the chart replaces.
const (
	chartPermissions    = chart + "/files/nats-permissions.yaml"
	placeholderCluster  = "zs-cluster-placeholder"
	placeholderProvider = "zs-provider-placeholder"
)

// natsPermissionsFile is the chart's permissions file as events gives it.
func natsPermissionsFile() []byte {
	type perms struct {
		Identity  string   `json:"identity"`
		Inbox     string   `json:"inbox"`
		Publish   []string `json:"publish"`
		Subscribe []string `json:"subscribe"`
		Responds  bool     `json:"responds"`
	}
	out := map[string]perms{}
	for _, p := range []events.Permissions{
		events.CollectorPermissions(placeholderCluster), events.DedupPermissions(), events.PlannerPermissions(),
		events.ApplierPermissions(placeholderProvider), events.PortalPermissions(), events.OperatorPermissions(),
	} {
		out[p.Role] = perms{p.Identity, p.InboxPrefix, p.Publish, p.Subscribe, p.Responds}
	}
	// With dnsProviders.enabled the applier is the applier of declared
	// providers (its role is the applier's too).
	d := events.DeclaredApplierPermissions()
	out["declaredApplier"] = perms{d.Identity, d.InboxPrefix, d.Publish, d.Subscribe, d.Responds}
	b, err := yaml.Marshal(out)
	if err != nil {
		panic(err)
	}
	return append([]byte("# Generated from events/permissions.go by systemtest TestHelmNATSPermissions\n"+
		"# (ZS_UPDATE=1 rewrites it); the chart replaces the placeholders by clusterName and provider.name;\n"+
		"# declaredApplier is the applier's identity with dnsProviders.enabled.\n"), b...)
}

// TestHelmNATSPermissions keeps the chart's permissions file what
// events/permissions.go says: ZS_UPDATE=1 rewrites it.
func TestHelmNATSPermissions(t *testing.T) {
	want := natsPermissionsFile()
	if os.Getenv("ZS_UPDATE") != "" {
		if err := os.WriteFile(chartPermissions, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := readFile(t, chartPermissions); got != string(want) {
		t.Errorf("%s is not what events/permissions.go gives: ZS_UPDATE=1 go test -run TestHelmNATSPermissions ./systemtest", chartPermissions)
	}
}

// TestHelmNATSConfig has nats-server read the configuration the chart
// makes for its bundled NATS: every identity is a user with the
// permissions events gives it, under the chart's cluster and provider.
func TestHelmNATSConfig(t *testing.T) {
	helm := goTool(t, "ZS_HELM", "helm")
	rendered := command(t, helm, "template", "zs", chart, "--set", "mode=distributed,clusterName=prod-eu,provider.name=rfc2136")
	var conf string
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var s corev1.Secret
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatal(err)
		}
		if s.Kind == "Secret" && s.Name == "zs-zonestream-nats-config" {
			conf = s.StringData["nats.conf"]
		}
	}
	if conf == "" {
		t.Fatalf("no nats.conf in the Secret zs-zonestream-nats-config:\n%s", rendered)
	}
	file := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("nats-server refuses the chart's configuration: %v\n%s", err, conf)
	}
	users := map[string]*server.User{}
	for _, u := range opts.Users {
		users[u.Username] = u
		if len(u.Password) < 32 {
			t.Errorf("%s has a password of %d characters", u.Username, len(u.Password))
		}
	}
	for _, p := range []events.Permissions{
		events.CollectorPermissions("prod-eu"), events.DedupPermissions(), events.PlannerPermissions(),
		events.ApplierPermissions("rfc2136"), events.PortalPermissions(), events.OperatorPermissions(),
	} {
		u := users[p.Identity]
		if u == nil {
			t.Errorf("no user %s in the chart's nats.conf", p.Identity)
			continue
		}
		if got := u.Permissions.Publish.Allow; !slices.Equal(got, p.Publish) {
			t.Errorf("%s may publish to %v, want %v", p.Identity, got, p.Publish)
		}
		if got := u.Permissions.Subscribe.Allow; !slices.Equal(got, p.Subscribe) {
			t.Errorf("%s may subscribe to %v, want %v", p.Identity, got, p.Subscribe)
		}
		if responds := u.Permissions.Response != nil; responds != p.Responds {
			t.Errorf("%s answers requests: %v, want %v", p.Identity, responds, p.Responds)
		}
	}
	if len(users) != 6 {
		t.Errorf("the chart's nats.conf has %d users, want 6", len(users))
	}
}
