package systemtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/kube"
)

// TestLogsJSONDebugFromEveryStage: the all-in-one with --log-format=json
// --log-level=debug (and --once, so it ends) writes only JSON objects to
// stderr, with ExternalDNS' (logrus') keys and lower case levels,
// durations as strings, and debug lines saying what each stage decided:
// the collector published the Service's endpoints, dedup which objects
// won the name, the planner the name's plan, the applier the change.
func TestLogsJSONDebugFromEveryStage(t *testing.T) {
	const zone = "logs.test"
	cluster := kube.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := setLoadBalancer(ctx, cluster.Client.CoreV1().Services("default"), "web",
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web." + zone}, "192.0.2.10"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig="+cluster.Kubeconfig, "--source=service",
		"--provider=inmemory", "--inmemory-zone="+zone, "--txt-owner-id=logs", "--data-dir="+t.TempDir(),
		"--nats-listen=127.0.0.1:0", "--metrics-address=127.0.0.1:0", "--interval=1m", "--once",
		"--log-format=json", "--log-level=debug")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zonestream --once: %v\n%s", err, lastBytes(stderr.Bytes(), 4096))
	}

	// decisions[service] holds the service's debug lines.
	decisions := map[string][]map[string]any{}
	durations := 0
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON object on stderr: %q", sc.Text())
		}
		level, _ := line["level"].(string)
		msg, _ := line["msg"].(string)
		if _, ok := line["time"].(string); !ok || msg == "" {
			t.Errorf("no time or msg: %s", sc.Text())
		}
		switch level {
		case "debug":
			service, _ := line["service"].(string)
			decisions[service] = append(decisions[service], line)
		case "info", "warning", "error":
		default:
			t.Errorf("level %q, not as logrus writes it: %s", level, sc.Text())
		}
		if took, ok := line["took"]; ok {
			if s, ok := took.(string); !ok || !strings.HasSuffix(s, "s") {
				t.Errorf("duration %v (%T), not a string like 1.5s: %s", took, took, sc.Text())
			}
			durations++
		}
	}
	if durations == 0 {
		t.Error("no line with a duration (took)")
	}
	has := func(v any, want string) bool {
		list, _ := v.([]any)
		for _, x := range list {
			if x == want {
				return true
			}
		}
		return v == want
	}
	for service, want := range map[string]struct {
		msg, key, value string
	}{
		"collector": {"published", "endpoints", "web." + zone + " A 192.0.2.10"},
		"dedup":     {"desired state published", "winners", "default/service/default/web"},
		"planner":   {"planned", "changes", "create web." + zone + " A"},
		"applier":   {"change applied", "change", "create web." + zone + " A"},
	} {
		found := false
		for _, line := range decisions[service] {
			found = found || line["msg"] == want.msg && has(line[want.key], want.value)
		}
		if !found {
			t.Errorf("no debug line %q with %s %q from the %s; its debug lines: %v", want.msg, want.key, want.value, service, decisions[service])
		}
	}
}
