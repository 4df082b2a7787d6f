package containers

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/zonestream/zonestream/testenv/loopback"
)

// The images hack/containers.sh builds: docker-compose.yml names the same.
const (
	zonestreamImage = "zonestream:latest"
	natsImage       = "nats:2.15-alpine"
)

// requireSystem skips unless hack/containers.sh (or whoever set
// ZS_SYSTEM_TESTS) runs a Docker engine holding the images.
func requireSystem(t *testing.T) {
	t.Helper()
	if os.Getenv("ZS_SYSTEM_TESTS") == "" {
		t.Skip("system tests need Docker and the images: hack/containers.sh runs them (ZS_SYSTEM_TESTS=1)")
	}
}

// startNATS runs NATS with JetStream in its own container and returns the
// URL the host (and host-network containers) reach it at.
func startNATS(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        natsImage,
			Cmd:          []string{"--jetstream", "--store_dir=/data", "--http_port=8222"},
			ExposedPorts: []string{"4222/tcp", "8222/tcp"},
			WaitingFor:   wait.ForHTTP("/healthz?js-enabled-only=true").WithPort("8222/tcp").WithStartupTimeout(30 * time.Second),
		},
		Started: true,
	})
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start NATS container: %v", err)
	}
	port, err := ctr.MappedPort(ctx, "4222/tcp")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("nats://127.0.0.1:%s", port.Port())
}

// stageContainer is one stage of the pipeline in a container of its own.
type stageContainer struct {
	name string
	ctr  testcontainers.Container
}

// startStage runs `zonestream <name> args...` from the zonestream image.
// It shares the host's network: the harness' kube-apiserver and BIND
// listen on loopback, and the stage reaches them as a process would. Its
// ops endpoint gets a free loopback port; the stage counts as started
// once its /readyz answers (zonestream healthcheck, inside the container).
func startStage(t *testing.T, name string, env map[string]string, files []testcontainers.ContainerFile, args ...string) *stageContainer {
	t.Helper()
	ops := loopback.Addr(t)
	cmd := append([]string{name, "--metrics-address=" + ops, "--log-level=debug"}, args...)
	ctr, err := testcontainers.GenericContainer(context.Background(), testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: zonestreamImage,
			Cmd:   cmd,
			Env:   env,
			Files: files,
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.NetworkMode = "host"
			},
			WaitingFor: wait.ForExec([]string{"/zonestream", "healthcheck", "--url=http://" + ops + "/readyz"}).
				WithPollInterval(200 * time.Millisecond).WithStartupTimeout(60 * time.Second),
		},
		Started: true,
	})
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start %s container: %v", name, err)
	}
	s := &stageContainer{name: name, ctr: ctr}
	t.Cleanup(func() {
		if t.Failed() {
			s.dumpLog(t)
		}
	})
	return s
}

// kill ends the stage with SIGKILL, as the kernel's OOM killer or a lost
// node would, and starts the same container again.
func (s *stageContainer) killAndRestart(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Close()
	if _, err := provider.Client().ContainerKill(ctx, s.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		t.Fatalf("kill %s: %v", s.name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := s.ctr.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Running {
			if st.ExitCode != 137 {
				t.Fatalf("%s exited %d after SIGKILL, want 137", s.name, st.ExitCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still running 30s after SIGKILL", s.name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.ctr.Start(ctx); err != nil {
		t.Fatalf("restart %s: %v", s.name, err)
	}
}

func (s *stageContainer) dumpLog(t *testing.T) {
	r, err := s.ctr.Logs(context.Background())
	if err != nil {
		t.Logf("%s logs: %v", s.name, err)
		return
	}
	defer r.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil || b.Len() > 1<<20 {
			break
		}
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	t.Logf("last lines of %s:\n%s", s.name, strings.Join(lines, "\n"))
}
