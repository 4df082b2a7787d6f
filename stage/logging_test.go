package stage

import (
	"bufio"
	"encoding/json"
	"github.com/zonestream/zonestream/stage/stagetest"
	"strings"
	"testing"
	"time"
)

// stderrOf runs f and returns what it wrote to stderr.
func stderrOf(t *testing.T, f func()) string { return stagetest.Stderr(t, f) }

// logEveryLevel logs one line at each level, with a duration, through
// the logger --log-format and --log-level build.
func logEveryLevel(t *testing.T, format string) string {
	return stderrOf(t, func() {
		l, err := (&Options{LogLevel: "debug", LogFormat: format}).Logger()
		if err != nil {
			t.Fatal(err)
		}
		l.Debug("a debug line", "took", 1500*time.Millisecond)
		l.Info("an info line", "took", 1500*time.Millisecond)
		l.WithGroup("g").Warn("a warning line", "took", 2*time.Minute)
		l.Error("an error line", "took", time.Duration(0))
	})
}

// TestJSONLogLinesReadAsExternalDNS': with --log-format=json every line
// on stderr is one JSON object with ExternalDNS' (logrus') keys time,
// level and msg, levels in logrus' lower case names, and durations as
// strings, not nanoseconds.
func TestJSONLogLinesReadAsExternalDNS(t *testing.T) {
	out := logEveryLevel(t, "json")
	var levels []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON object: %q: %v", sc.Text(), err)
		}
		level, _ := line["level"].(string)
		levels = append(levels, level)
		if _, ok := line["msg"].(string); !ok {
			t.Errorf("no msg: %q", sc.Text())
		}
		if _, ok := line["time"].(string); !ok {
			t.Errorf("no time: %q", sc.Text())
		}
		took := line["took"]
		if g, ok := line["g"].(map[string]any); ok {
			took = g["took"]
		}
		if _, ok := took.(string); !ok {
			t.Errorf("duration %v (%T), not a string: %q", took, took, sc.Text())
		}
	}
	if strings.Join(levels, ",") != "debug,info,warning,error" {
		t.Errorf("levels %v, want logrus' debug,info,warning,error", levels)
	}
	for _, want := range []string{`"took":"1.5s"`, `"took":"2m0s"`, `"took":"0s"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
}

// TestTextLogLinesReadAsExternalDNS': with --log-format=text the lines
// carry level=info, level=warning, ... as logrus writes them.
func TestTextLogLinesReadAsExternalDNS(t *testing.T) {
	out := logEveryLevel(t, "text")
	for _, want := range []string{
		`level=debug msg="a debug line" took=1.5s`,
		`level=info msg="an info line" took=1.5s`,
		`level=warning msg="a warning line" g.took=2m0s`,
		`level=error msg="an error line" took=0s`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "level=INFO") || strings.Contains(out, "level=WARN") {
		t.Errorf("slog's upper case levels in\n%s", out)
	}
}
