package systemtest

import (
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

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/kube"
)

// renderedChart is a rendering of the chart: each Deployment's container
// arguments and pod spec, the kinds and names of the rest, the bundled
// NATS' configuration.
type renderedChart struct {
	yaml     string
	args     map[string][]string // component -> arguments
	pods     map[string]corev1.PodSpec
	objects  []string // kind/namespace/name
	natsConf string
}

func renderChart(t *testing.T, set ...string) renderedChart {
	t.Helper()
	helm := goTool(t, "ZS_HELM", "helm")
	args := []string{"template", "zs", chart, "--namespace", "zonestream"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	r := renderedChart{yaml: command(t, helm, args...), args: map[string][]string{}, pods: map[string]corev1.PodSpec{}}
	for _, doc := range strings.Split(r.yaml, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if d.Kind == "" {
			continue
		}
		r.objects = append(r.objects, d.Kind+"/"+d.Namespace+"/"+d.Name)
		switch d.Kind {
		case "Deployment":
			c := d.Labels["app.kubernetes.io/component"]
			r.args[c], r.pods[c] = d.Spec.Template.Spec.Containers[0].Args, d.Spec.Template.Spec
		case "Secret":
			var s corev1.Secret
			if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
				t.Fatal(err)
			}
			if conf, ok := s.StringData["nats.conf"]; ok {
				r.natsConf = conf
			}
		}
	}
	return r
}

// dnsProviderArgs are the arguments about declared providers.
func dnsProviderArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--dnsprovider") {
			out = append(out, a)
		}
	}
	return out
}

// TestHelmChartDNSProviders: dnsProviders.enabled gives the applier (the
// all-in-one, or the applier's Deployment and no other) --dnsproviders,
// one --dnsprovider-namespace per dnsProviders.namespaces entry, a token
// for its ServiceAccount, and on the bundled NATS the identity
// applier-dnsproviders with its permissions; off, the chart renders as
// before. The RBAC it renders is applied to a real kube-apiserver, which
// is asked what the applier's ServiceAccount may do: DNSProviders, their
// status and finalizers, ClusterDNSProviders, and Secrets, cluster-wide or
// in the listed namespaces only.
func TestHelmChartDNSProviders(t *testing.T) {
	off := renderChart(t)
	if got := dnsProviderArgs(off.args["allinone"]); got != nil {
		t.Errorf("dnsProviders off: the all-in-one has %q", got)
	}
	if strings.Contains(off.yaml, "-dnsproviders") || strings.Contains(off.yaml, "zonestream.io") {
		t.Errorf("dnsProviders off renders something about them")
	}

	all := renderChart(t, "dnsProviders.enabled=true")
	if got := dnsProviderArgs(all.args["allinone"]); !slices.Equal(got, []string{"--dnsproviders"}) {
		t.Errorf("all-in-one: %q, want --dnsproviders", got)
	}

	// namespaced: the release's namespace, in the arguments and the RBAC.
	own := renderChart(t, "namespaced=true", "dnsProviders.enabled=true")
	if got := dnsProviderArgs(own.args["allinone"]); !slices.Equal(got, []string{"--dnsproviders", "--dnsprovider-namespace=zonestream"}) {
		t.Errorf("namespaced: %q, want --dnsproviders --dnsprovider-namespace=zonestream", got)
	}
	if !slices.Contains(own.objects, "Role/zonestream/zs-zonestream-dnsproviders") {
		t.Errorf("namespaced: no Role for DNSProviders in the release's namespace: %q", own.objects)
	}

	dist := renderChart(t, "mode=distributed", "provider.name=rfc2136", "dnsProviders.enabled=true", "dnsProviders.namespaces={team-a,team-b}")
	for c, args := range dist.args {
		want := []string(nil)
		if c == "applier" {
			want = []string{"--dnsproviders", "--dnsprovider-namespace=team-a", "--dnsprovider-namespace=team-b"}
		}
		if got := dnsProviderArgs(args); !slices.Equal(got, want) {
			t.Errorf("distributed: the %s has %q, want %q", c, got, want)
		}
	}
	pod := dist.pods["applier"]
	if pod.ServiceAccountName != "zs-zonestream" || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("the applier runs as %q with a token %v: it watches DNSProviders", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	for _, a := range []string{"--nats-user=applier-dnsproviders", "--nats-inbox-prefix=_INBOX.applier-dnsproviders"} {
		if !slices.Contains(dist.args["applier"], a) {
			t.Errorf("the applier is not given %s: %q", a, dist.args["applier"])
		}
	}
	checkDeclaredApplierUser(t, dist.natsConf)
	var password bool
	for _, v := range pod.Volumes {
		if s := v.Secret; s != nil && s.SecretName == "zs-zonestream-nats-users" {
			password = len(s.Items) == 1 && s.Items[0].Key == "applier-dnsproviders"
		}
	}
	if !password {
		t.Errorf("the applier's password is not applier-dnsproviders' of the users Secret: %+v", pod.Volumes)
	}

	// What the applier's ServiceAccount may do, asked of a real API server.
	cluster := kube.StartT(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is needed: ", err)
	}
	kc := func(args ...string) string {
		return command(t, kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	}
	for _, ns := range []string{"zonestream", "team-a", "team-b", "team-c"} {
		kc("create", "namespace", ns)
	}
	kc("apply", "-f", chart+"/crds/dnsprovider.yaml", "-f", chart+"/crds/clusterdnsprovider.yaml")
	kc("wait", "--for=condition=Established", "crd/dnsproviders.zonestream.io", "crd/clusterdnsproviders.zonestream.io")
	as := "--as=system:serviceaccount:zonestream:zs-zonestream"
	can := func(verb, resource, ns string) bool {
		args := []string{"auth", "can-i", as, verb}
		if r, sub, ok := strings.Cut(resource, "/"); ok {
			args = append(args, r, "--subresource="+sub)
		} else {
			args = append(args, resource)
		}
		if ns == "" {
			args = append(args, "--all-namespaces")
		} else {
			args = append(args, "-n", ns)
		}
		out, _ := exec.Command(kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).Output()
		return strings.TrimSpace(string(out)) == "yes"
	}
	apply := func(r renderedChart) {
		file := filepath.Join(t.TempDir(), "rbac.yaml")
		var docs []string
		for _, doc := range strings.Split(r.yaml, "\n---\n") {
			if strings.Contains(doc, "rbac-dnsproviders.yaml") {
				docs = append(docs, doc)
			}
		}
		if err := os.WriteFile(file, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		kc("apply", "-f", file)
	}
	grants := []struct{ verb, resource string }{
		{"watch", "dnsproviders.zonestream.io"}, {"patch", "dnsproviders.zonestream.io"}, {"update", "dnsproviders.zonestream.io/status"},
		{"update", "dnsproviders.zonestream.io/finalizers"}, {"list", "secrets"}, {"get", "secrets"},
	}

	apply(dist)
	for _, ns := range []string{"team-a", "team-b"} {
		for _, g := range grants {
			if !can(g.verb, g.resource, ns) {
				t.Errorf("namespaces team-a, team-b: the applier may not %s %s in %s", g.verb, g.resource, ns)
			}
		}
	}
	for _, ns := range []string{"team-c", "zonestream", ""} {
		if can("get", "secrets", ns) || can("list", "dnsproviders.zonestream.io", ns) {
			t.Errorf("namespaces team-a, team-b: the applier may read secrets or DNSProviders in %q", ns)
		}
	}
	for _, g := range []struct{ verb, resource string }{{"watch", "clusterdnsproviders.zonestream.io"},
		{"update", "clusterdnsproviders.zonestream.io/status"}, {"update", "clusterdnsproviders.zonestream.io/finalizers"}} {
		if !can(g.verb, g.resource, "") {
			t.Errorf("the applier may not %s %s", g.verb, g.resource)
		}
	}
	if can("delete", "dnsproviders.zonestream.io", "team-a") || can("create", "secrets", "team-a") {
		t.Error("the applier may delete DNSProviders or create Secrets")
	}

	apply(all) // every namespace: the ClusterRole grows, the Roles stay
	for _, ns := range []string{"team-c", ""} {
		for _, g := range grants {
			if !can(g.verb, g.resource, ns) {
				t.Errorf("every namespace: the applier may not %s %s in %q", g.verb, g.resource, ns)
			}
		}
	}

	// Values the schema refuses.
	helm := goTool(t, "ZS_HELM", "helm")
	for _, set := range []string{"dnsProviders.enabled=yes", "dnsProviders.namespaces={Team_A}", "dnsProviders.foo=1"} {
		if out, err := exec.Command(helm, "template", "zs", chart, "--set", set).CombinedOutput(); err == nil {
			t.Errorf("helm template --set %s rendered:\n%s", set, out)
		}
	}
}

// checkDeclaredApplierUser: the bundled NATS' configuration, read by
// nats-server, has the user applier-dnsproviders with the permissions
// events gives it, and no user for the flag provider's applier.
func checkDeclaredApplierUser(t *testing.T, conf string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("nats-server refuses the chart's configuration: %v\n%s", err, conf)
	}
	p := events.DeclaredApplierPermissions()
	var found bool
	for _, u := range opts.Users {
		switch u.Username {
		case p.Identity:
			found = true
			if !slices.Equal(u.Permissions.Publish.Allow, p.Publish) || !slices.Equal(u.Permissions.Subscribe.Allow, p.Subscribe) || u.Permissions.Response == nil {
				t.Errorf("%s's permissions in the chart's nats.conf are not events.DeclaredApplierPermissions: %+v", p.Identity, u.Permissions)
			}
		case events.ApplierPermissions("rfc2136").Identity:
			t.Errorf("the chart's nats.conf still has %s", u.Username)
		}
	}
	if !found || len(opts.Users) != 6 {
		t.Errorf("no user %s among the %d of the chart's nats.conf", p.Identity, len(opts.Users))
	}
}
