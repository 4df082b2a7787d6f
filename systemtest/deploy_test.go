package systemtest

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/testenv/kube"
)

const manifests = "../deploy/kubernetes"

// clusterManifests is the 3-node NATS option over manifests.
const clusterManifests = "../deploy/nats-cluster"

// TestKubernetesManifests has a real kube-apiserver validate every object
// of deploy/kubernetes (server-side dry run, so schemas and RBAC rules are
// checked as a cluster would), and each Deployment's arguments with the
// stage's own flags and configuration checks.
func TestKubernetesManifests(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is needed to validate deploy/kubernetes: ", err)
	}
	cluster := kube.StartT(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	// A dry run creates nothing, so the namespace must exist for real.
	run("create", "namespace", "zonestream")
	out := run("apply", "--dry-run=server", "-k", manifests)
	for _, want := range []string{"deployment.apps/zonestream-collector", "deployment.apps/zonestream-applier",
		"statefulset.apps/nats", "networkpolicy.networking.k8s.io/nats", "clusterrole.rbac.authorization.k8s.io/zonestream-collector",
		"customresourcedefinition.apiextensions.k8s.io/dnsendpoints.externaldns.k8s.io",
		"poddisruptionbudget.policy/zonestream-planner", "poddisruptionbudget.policy/zonestream-collector"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply did not list %s:\n%s", want, out)
		}
	}

	out = run("apply", "--dry-run=server", "-k", clusterManifests)
	for _, want := range []string{"statefulset.apps/nats", "service/nats-cluster", "poddisruptionbudget.policy/nats"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -k %s did not list %s:\n%s", clusterManifests, want, out)
		}
	}
	checkClusterManifests(t, run("kustomize", clusterManifests))

	files, err := filepath.Glob(filepath.Join(manifests, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var sts appsv1.StatefulSet
			if err := yaml.Unmarshal([]byte(doc), &sts); err == nil && sts.Kind == "StatefulSet" {
				if sc := sts.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
					t.Errorf("%s: StatefulSet %s may run as root", f, sts.Name)
				}
			}
		}
		var d appsv1.Deployment
		if err := yaml.Unmarshal(data, &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		if name, elected := checkStageDeployment(t, f, d); name != "" {
			seen[name] = true
			// Two replicas, one of which works: the other stands by.
			if r := d.Spec.Replicas; r == nil || *r < 2 || !elected {
				t.Errorf("%s: %s runs %v replicas, leader election %v: want 2 or more, elected", f, name, r, elected)
			}
		}
	}
	for _, st := range cli.Stages() {
		if !seen[st.Name] {
			t.Errorf("no Deployment runs the %s stage", st.Name)
		}
	}
}

// checkClusterManifests checks the rendered 3-node option: three NATS
// servers routed to one another, and every stage knowing all three and
// asking for streams at R3, as its own flag parsing reads it.
func checkClusterManifests(t *testing.T, rendered string) {
	t.Helper()
	stagesSeen := 0
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		switch d.Kind {
		case "StatefulSet":
			var sts appsv1.StatefulSet
			if err := yaml.Unmarshal([]byte(doc), &sts); err != nil {
				t.Fatal(err)
			}
			args := strings.Join(sts.Spec.Template.Spec.Containers[0].Args, " ")
			if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 || !strings.Contains(args, "--routes=") || !strings.Contains(args, "--server_name=") {
				t.Errorf("%s: NATS is not three routed servers: replicas %v, args %s", clusterManifests, sts.Spec.Replicas, args)
			}
		case "Deployment":
			args := d.Spec.Template.Spec.Containers[0].Args
			st, ok := cli.FindStage(args[0])
			if !ok {
				t.Errorf("%s runs unknown stage %q", clusterManifests, args[0])
				continue
			}
			fs := flag.NewFlagSet(st.Name, flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var opts stage.Options
			opts.RegisterFlags(fs)
			st.Standalone(fs)
			if err := stage.Parse(fs, args[1:]); err != nil {
				t.Errorf("%s: %s: %v", clusterManifests, st.Name, err)
				continue
			}
			if opts.Replicas != 3 || len(strings.Split(opts.NatsURL, ",")) != 3 {
				t.Errorf("%s: %s has --nats-stream-replicas=%d, --nats-url=%s", clusterManifests, st.Name, opts.Replicas, opts.NatsURL)
			}
			stagesSeen++
		}
	}
	if stagesSeen != len(cli.Stages()) {
		t.Errorf("%s: %d stages, want %d", clusterManifests, stagesSeen, len(cli.Stages()))
	}
}

// checkStageDeployment checks a stage's Deployment from source: no secret
// among its arguments, no service-account token where the stage does not
// talk to Kubernetes, and arguments its own flag parsing and configuration
// checks accept. It returns the stage's name ("" when it runs none) and
// whether it runs under leader election.
func checkStageDeployment(t *testing.T, source string, d appsv1.Deployment) (name string, elected bool) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	args := slices.Clone(c.Args)
	// Secrets come from the environment (EXTERNAL_DNS_<FLAG>, from a
	// Secret) or from mounted files, never from the arguments.
	secrets := secretFlags()
	for _, a := range args {
		for _, secret := range secrets {
			if strings.HasPrefix(a, "--"+secret+"=") {
				t.Errorf("%s passes %s as an argument: it shows in ps and the Pod spec", source, secret)
			}
		}
	}
	// The stage reads its env as kubelet sets it; a value from a
	// Secret stands in as a base64 placeholder.
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = "cGxhY2Vob2xkZXI="
		}
		t.Setenv(e.Name, v)
	}
	standInMountedSecrets(t, d, args)
	st, ok := cli.FindStage(args[0])
	if !ok {
		t.Errorf("%s runs unknown stage %q", source, args[0])
		return "", false
	}
	fs := flag.NewFlagSet(st.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var opts stage.Options
	opts.RegisterFlags(fs)
	opts.Election.RegisterFlags(fs)
	construct := st.Standalone(fs)
	// The collector reads objects; the applier with --registry=crd keeps
	// ownership in DNSRecords. No other stage talks to Kubernetes.
	kube := st.Name == "collector" || (st.Name == "applier" && slices.Contains(args, "--registry=crd"))
	if !kube {
		if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
			t.Errorf("%s: the %s stage does not talk to Kubernetes but gets a service-account token", source, st.Name)
		}
	}
	if err := stage.Parse(fs, args[1:]); err != nil {
		t.Errorf("%s: %v", source, err)
		return st.Name, opts.Election.Enabled
	}
	if kube {
		return st.Name, opts.Election.Enabled // New needs a cluster to talk to; its flags parsed
	}
	if _, err := construct(slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Errorf("%s: %s rejects its configuration: %v", source, st.Name, err)
	}
	return st.Name, opts.Election.Enabled
}

// secretFlags are the flags that carry a secret: those with a
// --<flag>-file twin (stage.SecretVar). cli's TestNoSecretFlagWithoutAFile
// checks that every flag that looks like a secret has one.
func secretFlags() []string {
	fs := cli.NewAllInOne().FlagSet()
	var secrets []string
	fs.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name+"-file") != nil {
			secrets = append(secrets, f.Name)
		}
	})
	return secrets
}

// standInMountedSecrets points each --<secret>-file argument that names a
// file of a mounted Secret at a placeholder file, as kubelet would mount
// it; a file outside every mount is left for the parsing to refuse.
func standInMountedSecrets(t *testing.T, d appsv1.Deployment, args []string) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	for i, a := range args {
		flagName, path, ok := strings.Cut(a, "=")
		if !ok || !strings.HasSuffix(flagName, "-file") {
			continue
		}
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(path, m.MountPath+"/") {
				continue
			}
			// 32 bytes: also a valid --txt-encrypt-aes-key.
			standIn := filepath.Join(t.TempDir(), filepath.Base(path))
			if err := os.WriteFile(standIn, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args[i] = flagName + "=" + standIn
		}
	}
}
