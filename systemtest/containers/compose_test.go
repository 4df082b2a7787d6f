package containers

import (
	"context"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// TestComposeFilesLoad loads docker-compose.yml, alone and with
// deploy/compose/local-kube.yml, with compose-go, the loader of `docker
// compose` (v2): CI brings the stack up with Debian's docker-compose (v1),
// users with v2. With the override the collector reads the local
// apiserver's kubeconfig and waits for it; every stage and BIND has a
// healthcheck; every volume is named.
func TestComposeFilesLoad(t *testing.T) {
	load := func(files ...string) *types.Project {
		t.Helper()
		opts, err := cli.NewProjectOptions(files, cli.WithWorkingDirectory(".."), cli.WithName("check"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := opts.LoadProject(context.Background())
		if err != nil {
			t.Fatalf("%v: %v", files, err)
		}
		return p
	}
	base := load("../../docker-compose.yml")
	for _, name := range []string{"nats", "bind", "collector", "dedup", "planner", "applier", "portal"} {
		s, ok := base.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no %s service", name)
		}
		if name != "bind" && (s.HealthCheck == nil || len(s.HealthCheck.Test) == 0) {
			t.Errorf("%s has no healthcheck", name) // bind's is in its image
		}
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind && v.Target != "/kube/config" {
				t.Errorf("%s mounts a host path %s: the stack keeps its state in named volumes", name, v.Source)
			}
		}
		for _, p := range s.Ports {
			if p.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes port %d beyond loopback", name, p.Target)
			}
		}
	}
	if got := base.Services["collector"].Environment["KUBECONFIG"]; got == nil || *got != "/kube/config" {
		t.Errorf("collector KUBECONFIG = %v, want /kube/config", got)
	}

	local := load("../../docker-compose.yml", "../../deploy/compose/local-kube.yml")
	c := local.Services["collector"]
	if got := c.Environment["KUBECONFIG"]; got == nil || *got != "/local-kube/kubeconfig" {
		t.Errorf("with local-kube.yml the collector's KUBECONFIG = %v, want /local-kube/kubeconfig", got)
	}
	if _, ok := c.DependsOn["kube-apiserver"]; !ok {
		t.Error("with local-kube.yml the collector does not wait for the kube-apiserver")
	}
	if _, ok := c.DependsOn["nats"]; !ok {
		t.Error("with local-kube.yml the collector no longer waits for NATS")
	}
	args := strings.Join(local.Services["kube-apiserver"].Command, " ")
	for _, want := range []string{"--etcd-servers=http://etcd:2379", "--token-auth-file=/kube/tokens.csv", "--service-account-signing-key-file=/kube/sa.key"} {
		if !strings.Contains(args, want) {
			t.Errorf("kube-apiserver runs without %s: %s", want, args)
		}
	}
}
