package applier

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// TestLogRejectedOneLinePerError: a provider that is down fails every
// change of a plan for one reason, which is logged once with the count and
// a few of the changes, not once per change.
func TestLogRejectedOneLinePerError(t *testing.T) {
	var failed []events.FailedChange
	for _, name := range []string{"a.example.org", "b.example.org", "c.example.org", "d.example.org", "e.example.org", "f.example.org"} {
		failed = append(failed, events.FailedChange{Change: events.Change{New: &events.Endpoint{DNSName: name, RecordType: "A", Targets: []string{"192.0.2.1"}}}, Error: "etcd unreachable"})
	}
	failed = append(failed, events.FailedChange{Change: events.Change{New: &events.Endpoint{DNSName: "g.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}}}, Error: "invalid target"})
	var buf bytes.Buffer
	logRejected(slog.New(slog.NewTextHandler(&buf, nil)), failed)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per distinct error (2):\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[0], "count=6") || !strings.Contains(lines[0], "a.example.org") ||
		strings.Contains(lines[0], "f.example.org") || !strings.Contains(lines[0], `err="etcd unreachable"`) {
		t.Errorf("first line: want count=6, the first 5 changes and the error: %s", lines[0])
	}
	if !strings.Contains(lines[1], "count=1") || !strings.Contains(lines[1], "g.example.org") || !strings.Contains(lines[1], `err="invalid target"`) {
		t.Errorf("second line: want count=1, g.example.org and its error: %s", lines[1])
	}
}
