package systemtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// The command line as a user meets it, on the binary the other system
// tests run (built with -tags externaldns when they are): help, a
// misspelled flag, the version, and what a start that cannot reach its
// NATS says.

// runBinary runs zonestream with args and stdin held open (a command that
// read it would hang until timeout), and returns its output and exit code.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	stdin, err := cmd.StdinPipe() // never closed before the end
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("zonestream %q still runs after 20s; stderr: %s", args, errOut.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// helpCommands are every command of zonestream, as a user types it before
// --help.
var helpCommands = [][]string{{}, {"run"}, {"collector"}, {"dedup"}, {"planner"}, {"applier"}, {"portal"},
	{"decode"}, {"healthcheck"}, {"plans"}, {"plans", "approve"}, {"explain"}, {"tail"}, {"streams"}, {"streams", "ensure"},
	{"cluster"}, {"cluster", "retire"}, {"nats-config"}, {"webhook-server"}, {"version"}, {"demo"}, {"help"}}

// -h and --help print the help on stdout and exit 0, in every command:
// none starts, reads stdin, or hands --help to ExternalDNS' parser.
func TestHelpExitsZeroInEveryCommand(t *testing.T) {
	for _, cmd := range helpCommands {
		for _, h := range []string{"--help", "-h"} {
			args := append(append([]string{}, cmd...), h)
			stdout, stderr, code := runBinary(t, binary, args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: zonestream") {
				t.Errorf("zonestream %q: exit %d, stderr %q, stdout starts %q", args, code, stderr, firstLine(stdout))
			}
		}
	}
	// zonestream help COMMAND is COMMAND --help.
	stdout, _, code := runBinary(t, binary, "help", "collector")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: zonestream collector") {
		t.Errorf("zonestream help collector: exit %d, %q", code, firstLine(stdout))
	}
}

// zonestream --help names every command and prints the flags double-dashed
// and grouped; the ignored ExternalDNS flags are left to --help-ignored.
// In the build with ExternalDNS' providers, their flags are read, and the
// help says so.
func TestHelpListsCommandsAndGroupsFlags(t *testing.T) {
	help, _, _ := runBinary(t, binary, "--help")
	for _, want := range []string{"collector|dedup|planner|applier|portal", "webhook-server", "decode", "tail", "explain",
		"cluster retire", "plans approve", "nats-config", "streams ensure", "healthcheck", "version", "help [COMMAND]",
		"\nNATS (the bus):\n", "\nKubernetes sources (collector):\n", "\nProvider (applier):\n",
		"\nRegistry and ownership:\n", "\nSafety:\n", "\nOperations (metrics, logs, leader election):\n",
		"      --nats-url string", "      --help-ignored"} {
		if !strings.Contains(help, want) {
			t.Errorf("zonestream --help lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+ `).MatchString(help) {
		t.Errorf("zonestream --help prints a single-dash flag")
	}
	for _, ignored := range []string{"--min-event-sync-interval", "--txt-cache-interval", "--events "} {
		if strings.Contains(help, ignored) {
			t.Errorf("zonestream --help lists the ignored %s", ignored)
		}
	}
	listed, _, code := runBinary(t, binary, "--help-ignored")
	if code != 0 || !strings.Contains(listed, "--min-event-sync-interval") || !strings.Contains(listed, "--rfc2136-axfr is --rfc2136-tsig-axfr") {
		t.Errorf("zonestream --help-ignored: exit %d\n%s", code, listed)
	}
	for _, cmd := range []string{"--help", "applier --help"} {
		help, _, _ := runBinary(t, binary, strings.Fields(cmd)...)
		awsRead := strings.Contains(help, "ExternalDNS providers' flags (read by ExternalDNS' own parser in this build):") &&
			strings.Contains(help, "      --aws-zone-type")
		if binaryTags == "externaldns" && !awsRead {
			t.Errorf("zonestream %s in the externaldns build does not list --aws-zone-type as read", cmd)
		}
		if binaryTags != "externaldns" && strings.Contains(help, "--aws-zone-type") {
			t.Errorf("zonestream %s without ExternalDNS' providers lists --aws-zone-type", cmd)
		}
	}
	if binaryTags == "externaldns" {
		listed, _, _ := runBinary(t, binary, "applier", "--help-ignored")
		if strings.Contains(listed, "--aws-zone-type") {
			t.Errorf("zonestream applier --help-ignored in the externaldns build says --aws-zone-type is ignored")
		}
	}
}

// A misspelled flag or command is one line on stderr naming the nearest
// known one, and exit 2; nothing on stdout.
func TestMisspelledFlagNamesTheNearest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats-ulr", "nats://x:4222"}, "unknown flag --nats-ulr; did you mean --nats-url?"},
		{[]string{"collector", "--sourc=service"}, "unknown flag --sourc; did you mean --source?"},
		{[]string{"applier", "--provder", "inmemory"}, "unknown flag --provder; did you mean --provider?"},
		{[]string{"applier", "--aws-zone-typ=public"}, "unknown flag --aws-zone-typ; did you mean --aws-zone-type?"},
		{[]string{"healthcheck", "--ulr", "http://x"}, "unknown flag --ulr; did you mean --url?"},
		{[]string{"tail", "--no-folow", "zs.>"}, "unknown flag --no-folow; did you mean --no-follow?"},
		{[]string{"--hepl"}, "did you mean --help?"},
		{[]string{"colector"}, `unknown command "colector"; did you mean "collector"?`},
	} {
		stdout, stderr, code := runBinary(t, binary, c.args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("zonestream %q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// --version and zonestream version print the same line: the version set at
// link time, the VCS revision and time, the build tags, Go.
func TestVersionNamesRevisionAndTags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "zonestream")
	ldflags := "-X github.com/zonestream/zonestream/stage.version=v9.8.7-test"
	build := func(vcs string) error {
		out, err := exec.Command("go", "build", "-buildvcs="+vcs, "-tags="+binaryTags, "-ldflags="+ldflags, "-o", bin, zonestreamPackage).CombinedOutput()
		if err != nil {
			t.Logf("go build -buildvcs=%s: %v\n%s", vcs, err, out)
		}
		return err
	}
	vcs := build("true") == nil
	if !vcs && build("false") != nil {
		t.Fatal("cannot build zonestream")
	}
	flag, _, code1 := runBinary(t, bin, "--version")
	cmd, _, code2 := runBinary(t, bin, "version")
	stage, _, code3 := runBinary(t, bin, "planner", "--version")
	if code1 != 0 || code2 != 0 || code3 != 0 || flag != cmd || flag != stage || strings.Count(flag, "\n") != 1 {
		t.Fatalf("--version %q (exit %d), version %q (exit %d), planner --version %q (exit %d): want one same line",
			flag, code1, cmd, code2, stage, code3)
	}
	tags := "tags none"
	if binaryTags != "" {
		tags = "tags " + binaryTags
	}
	for _, want := range []string{"zonestream v9.8.7-test (", tags, " go1."} {
		if !strings.Contains(flag, want) {
			t.Errorf("version %q lacks %q", flag, want)
		}
	}
	// What the toolchain stamped (nothing where it finds no repository,
	// or in workspace mode) is what the version must say.
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if rev := regexp.MustCompile(`vcs\.revision=([0-9a-f]+)`).FindSubmatch(info); vcs && rev != nil {
		if !regexp.MustCompile(`revision ` + string(rev[1]) + ` \d{4}-\d\d-\d\dT`).MatchString(flag) {
			t.Errorf("version %q names not the revision %s and its time", flag, rev[1])
		}
	} else if !strings.Contains(flag, "revision unknown (built with -buildvcs=false)") {
		t.Errorf("version %q of a build without VCS stamp does not say the revision is unknown", flag)
	}
}

// fakeKubeconfig is a kubeconfig of an API server that is not there: the
// all-in-one's collector builds its client, and never gets to use it in
// these tests.
func fakeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://` + freePort(t) + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A stage whose NATS is not there says why (connection refused to the
// URL), keeps retrying, and SIGTERM while it waits ends it with exit 0:
// for a stage alone and for the all-in-one against --nats-url.
func TestUnreachableNATSSaysConnectionRefusedAndSIGTERMExitsZero(t *testing.T) {
	url := "nats://127.0.0.1:" + freePort(t)
	for name, args := range map[string][]string{
		"dedup": {"dedup", "--nats-url", url, "--metrics-address="},
		"all-in-one": {"--nats-url", url, "--metrics-address=", "--source=service", "--kubeconfig", fakeKubeconfig(t),
			"--provider=inmemory", "--inmemory-zone=example.org", "--data-dir", t.TempDir()},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(binary, args...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			said := make(chan string, 1)
			var log bytes.Buffer
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					log.WriteString(sc.Text() + "\n")
					if strings.Contains(sc.Text(), "connection refused to "+url) {
						select {
						case said <- sc.Text():
						default:
						}
					}
				}
				close(said)
			}()
			select {
			case line, ok := <-said:
				if !ok {
					t.Fatalf("zonestream %s ended without saying connection refused to %s", name, url)
				}
				if strings.Contains(line, "streams ensure") {
					t.Errorf("the unreachable NATS is reported as missing streams: %s", line)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("zonestream %s did not say connection refused to %s within 15s", name, url)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() {
				for range said { // the rest of the log
				}
				exited <- cmd.Wait()
			}()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("zonestream %s after SIGTERM while waiting for NATS: %v; want exit 0\n%s", name, err, log.String())
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("zonestream %s still runs 15s after SIGTERM", name)
			}
		})
	}
}

// The embedded NATS' port in use is reported at once, not after the
// server's 30s wait to become ready.
func TestEmbeddedNATSPortInUseAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	_, stderr, code := runBinary(t, binary, "--nats-listen", ln.Addr().String(), "--metrics-address=", "--source=service",
		"--kubeconfig", fakeKubeconfig(t), "--provider=inmemory", "--inmemory-zone=example.org", "--data-dir", t.TempDir())
	took := time.Since(start)
	if code != 1 || !strings.Contains(stderr, "address already in use") || !strings.Contains(stderr, ln.Addr().String()) || took > 10*time.Second {
		t.Errorf("zonestream on a taken --nats-listen: exit %d after %v, stderr %q; want exit 1 at once, naming the address in use", code, took, stderr)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// A stage that found its NATS unreachable goes on once it is there: a
// real NATS started on the port it retries gets the pipeline's streams.
func TestUnreachableNATSThenThereConnects(t *testing.T) {
	port := freePort(t)
	url := "nats://127.0.0.1:" + port
	log := &lockedBuffer{}
	cmd := exec.Command(binary, "dedup", "--nats-url", url, "--metrics-address=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), "connection refused to "+url) {
		if time.Now().After(deadline) {
			t.Fatalf("dedup did not say connection refused to %s:\n%s", url, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	portNum, _ := strconv.Atoi(port)
	natsenv.StartT(t, func(o *server.Options) { o.Port = portNum })
	_, js := natsenv.Connect(t, url)
	name := events.Streams()[0].Name
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.Stream(ctx, name)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline.Add(15 * time.Second)) {
			t.Fatalf("dedup did not create stream %s once NATS was there: %v\n%s", name, err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lockedBuffer is a process' output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
