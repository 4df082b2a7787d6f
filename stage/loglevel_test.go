package stage

import (
	"context"
	"log/slog"
	"testing"
)

// TestLogLevelsOfExternalDNS: --log-level takes slog's names and
// ExternalDNS' (logrus') ones, which its Helm chart offers (logLevel:
// warning); anything else is refused.
func TestLogLevelsOfExternalDNS(t *testing.T) {
	for level, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
		"trace": slog.LevelDebug, "warning": slog.LevelWarn, "WARNING": slog.LevelWarn,
		"fatal": slog.LevelError, "panic": slog.LevelError,
	} {
		o := Options{LogLevel: level, LogFormat: "text"}
		l, err := o.Logger()
		if err != nil {
			t.Errorf("--log-level=%s: %v", level, err)
			continue
		}
		if !l.Enabled(context.Background(), want) || want > slog.LevelDebug && l.Enabled(context.Background(), want-1) {
			t.Errorf("--log-level=%s: not level %s", level, want)
		}
	}
	if _, err := (&Options{LogLevel: "loud", LogFormat: "text"}).Logger(); err == nil {
		t.Error("--log-level=loud accepted")
	}
}
