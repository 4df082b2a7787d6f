package stage

import (
	"fmt"
	"io"
	"log/slog"
)

// NewLogHandler is the handler of every zonestream process' log: text or
// JSON (format, as --log-format takes it) on w, at level and above.
// Its lines read as ExternalDNS' (logrus') do, which its users' parsers
// and alerts expect: keys time, level and msg; levels in logrus' lower
// case names (debug, info, warning, error); durations as Go writes
// them ("1.5s"), not as nanoseconds.
func NewLogHandler(w io.Writer, format string, level slog.Leveler) (slog.Handler, error) {
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: ReplaceLogAttr}
	switch format {
	case "text":
		return slog.NewTextHandler(w, hopts), nil
	case "json":
		return slog.NewJSONHandler(w, hopts), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither text nor json", format)
}

// ReplaceLogAttr is NewLogHandler's slog.HandlerOptions.ReplaceAttr: the
// level as logrus names it, durations as strings.
func ReplaceLogAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.String(slog.LevelKey, LogLevelName(l))
		}
	}
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// LogLevelName is the name logrus, and so ExternalDNS, writes for the
// level: trace, debug, info, warning, error.
func LogLevelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warning"
	}
	return "error"
}
