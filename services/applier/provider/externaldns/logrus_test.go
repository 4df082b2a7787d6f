package externaldns_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/stage"
	"github.com/zonestream/zonestream/stage/stagetest"
)

// stderrLines runs f and returns the lines it wrote to stderr.
func stderrLines(t *testing.T, f func()) []string {
	t.Helper()
	out := stagetest.Stderr(t, f)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// runApplierLogging builds the applier stage as `zonestream applier
// --log-format=format --log-level=level args...` does, with ExternalDNS'
// ns1 provider, which logs through logrus as it starts ("ns1-endpoint
// flag is set, ..."); then ExternalDNS-style code logs with logrus at each
// level. It returns the lines on stderr.
func runApplierLogging(t *testing.T, format, level string) []string {
	t.Helper()
	t.Setenv("NS1_APIKEY", "test-key")
	t.Cleanup(resetLogrus)
	return stderrLines(t, func() {
		// logrus writes to the os.Stderr it saw first: where it writes
		// without the bridge, the test would not see it, so point it at
		// the pipe.
		logrus.SetOutput(os.Stderr)
		logger, err := (&stage.Options{LogFormat: format, LogLevel: level}).Logger()
		if err != nil {
			t.Fatal(err)
		}
		def := externaldns.ApplierStage()
		fs := flag.NewFlagSet("applier", flag.ContinueOnError)
		construct := def.Standalone(fs)
		args := []string{"--provider=ns1", "--ns1-endpoint=http://127.0.0.1:1/v1/",
			"--domain-filter=example.org", "--txt-owner-id=logs"}
		if err := fs.Parse(def.TakeArgs(fs, args)); err != nil {
			t.Fatal(err)
		}
		if _, err := construct(logger.With("service", "applier")); err != nil {
			t.Fatal(err)
		}
		logrus.Debugf("Fetching records for %q", "example.org")
		logrus.WithField("zone", "example.org").WithError(errors.New("refused: token=s3cr3t")).Warn("Last operation failed")
		logrus.WithField("took", 1500*time.Millisecond).Info("batch done")
	})
}

// TestExternalDNSLogsAsZonestreamDoes: with --log-format=json every line
// on stderr, those of ExternalDNS' provider code (logrus) too, is one
// JSON object with logrus' keys and lower case levels (a warning reads
// "warning", as logrus writes it), logrus' fields as attributes, the
// stage's attributes, durations as strings, secrets redacted; at
// --log-level=debug ExternalDNS' debug lines show, at info they do not.
func TestExternalDNSLogsAsZonestreamDoes(t *testing.T) {
	lines := runApplierLogging(t, "json", "debug")
	byMsg := map[string]map[string]any{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON object: %q", l)
		}
		switch m["level"] {
		case "debug", "info", "warning", "error":
		default:
			t.Errorf("level %v, not logrus' lower case: %s", m["level"], l)
		}
		msg, _ := m["msg"].(string)
		if _, ok := m["time"].(string); !ok || msg == "" {
			t.Errorf("no time or msg: %s", l)
		}
		byMsg[strings.Fields(msg + " .")[0]] = m
	}
	started := byMsg["ns1-endpoint"]
	if started == nil || started["level"] != "info" || !strings.Contains(started["msg"].(string), "targeting endpoint") {
		t.Fatalf("no JSON line of ExternalDNS' rfc2136 provider as it starts in\n%s", strings.Join(lines, "\n"))
	}
	if started["service"] != "applier" || started["provider"] != "ns1" {
		t.Errorf("ExternalDNS' line lacks the stage's attributes: %v", started)
	}
	if d := byMsg["Fetching"]; d == nil || d["level"] != "debug" {
		t.Errorf("ExternalDNS' debug line: %v", d)
	}
	w := byMsg["Last"]
	if w == nil || w["level"] != "warning" || w["zone"] != "example.org" {
		t.Errorf("ExternalDNS' warning with fields: %v", w)
	} else if e, _ := w["error"].(string); strings.Contains(e, "s3cr3t") || !strings.Contains(e, "refused") {
		t.Errorf("error field %q: not redacted", e)
	}
	if b := byMsg["batch"]; b == nil || b["took"] != "1.5s" {
		t.Errorf("duration field: %v", b)
	}

	for _, l := range runApplierLogging(t, "json", "info") {
		if strings.Contains(l, `"level":"debug"`) {
			t.Errorf("a debug line at --log-level=info: %s", l)
		}
	}
	if logrus.IsLevelEnabled(logrus.DebugLevel) {
		t.Error("logrus formats debug entries at --log-level=info")
	}
}

// TestExternalDNSLogsText: with --log-format=text ExternalDNS' lines are
// those of slog's text handler, with logrus' level names.
func TestExternalDNSLogsText(t *testing.T) {
	lines := runApplierLogging(t, "text", "info")
	text := strings.Join(lines, "\n")
	for _, want := range []string{`level=info msg="ns1-endpoint flag is set`, `level=warning msg="Last operation failed"`, `took=1.5s`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, "service=applier") {
			t.Errorf("not a zonestream line: %s", l)
		}
	}
}

// resetLogrus gives logrus' standard logger back its defaults: the
// handler a test bridged it to writes to a closed pipe.
func resetLogrus() {
	std := logrus.StandardLogger()
	std.ReplaceHooks(logrus.LevelHooks{})
	std.SetOutput(os.Stderr)
	std.SetFormatter(&logrus.TextFormatter{})
	std.SetLevel(logrus.InfoLevel)
}
