package cli

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestNatsConfigKeepsSeeds: running nats-config again, with one more
// cluster, keeps every existing identity's key and adds the new one.
func TestNatsConfigKeepsSeeds(t *testing.T) {
	dir := t.TempDir()
	gen := func(clusters ...string) string {
		args := []string{"--out-dir=" + dir, "--provider=rfc2136"}
		for _, c := range clusters {
			args = append(args, "--cluster="+c)
		}
		var out bytes.Buffer
		if err := NatsConfigCommand(args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	nkeysOf := func(conf string) map[string]string {
		keys := map[string]string{}
		var id string
		for _, line := range strings.Split(conf, "\n") {
			line = strings.TrimSpace(line)
			if rest, ok := strings.CutPrefix(line, "# "); ok && strings.Contains(rest, "--nats-inbox-prefix") {
				id = strings.Fields(rest)[0]
			}
			if rest, ok := strings.CutPrefix(line, `{nkey: "`); ok {
				keys[id] = rest[:strings.Index(rest, `"`)]
			}
		}
		return keys
	}
	first, second := nkeysOf(gen("a")), nkeysOf(gen("a", "b"))
	if len(first) != 6 || len(second) != 7 {
		t.Fatalf("identities: %v then %v", first, second)
	}
	for id, k := range first {
		if second[id] != k {
			t.Errorf("%s got a new key", id)
		}
	}
	info, err := os.Stat(seedPath(dir, "collector-b"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("collector-b's seed: %v %v", info, err)
	}
}

// TestNatsConfigWithoutCollectorStatus: --collector-status=false gives a
// collector no read of the pipeline's outcome, and tells it to write none.
func TestNatsConfigWithoutCollectorStatus(t *testing.T) {
	for _, status := range []bool{true, false} {
		var conf, next bytes.Buffer
		args := []string{"--out-dir=" + t.TempDir(), "--provider=rfc2136", "--cluster=a", "--collector-status=" + strconv.FormatBool(status)}
		if err := NatsConfigCommand(args, &conf, &next); err != nil {
			t.Fatal(err)
		}
		collector := conf.String()[strings.Index(conf.String(), "# collector-a "):strings.Index(conf.String(), "# dedup ")]
		reads := strings.Contains(collector, "$JS.API.CONSUMER.CREATE.ZS_DESIRED")
		told := strings.Contains(next.String(), "--kube-status=false")
		if reads != status || told == status {
			t.Errorf("--collector-status=%t: the collector may read the desired state: %t; is told --kube-status=false: %t\n%s", status, reads, told, collector)
		}
	}
}

// TestNatsConfigDNSProviders: --dnsproviders adds the identity of the
// applier of declared providers (and is enough without a --provider);
// a --provider of the same name is refused rather than merged into it.
func TestNatsConfigDNSProviders(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--dnsproviders"}, true}, {[]string{"--dnsproviders=false"}, false}} {
		var conf, next bytes.Buffer
		args := append([]string{"--out-dir=" + dir, "--provider=rfc2136", "--cluster=a"}, c.args...)
		if err := NatsConfigCommand(args, &conf, &next); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(conf.String(), "# applier-dnsproviders ") && strings.Contains(next.String(), "applier-dnsproviders.nk")
		if has != c.want || !strings.Contains(conf.String(), "# applier-rfc2136 ") {
			t.Errorf("%q: the applier of declared providers has an identity: %t, want %t\n%s", c.args, has, c.want, conf.String())
		}
	}
	if err := NatsConfigCommand([]string{"--out-dir=" + dir, "--cluster=a", "--dnsproviders"}, io.Discard, io.Discard); err != nil {
		t.Errorf("--dnsproviders without --provider: %v", err)
	}
	err := NatsConfigCommand([]string{"--out-dir=" + dir, "--cluster=a", "--provider=dnsproviders", "--dnsproviders"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "would share the identity applier-dnsproviders") {
		t.Errorf("--provider=dnsproviders with --dnsproviders: %v", err)
	}
}
