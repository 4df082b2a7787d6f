package externaldns

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/sirupsen/logrus"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// logThroughSlog makes ExternalDNS' code (its providers, constructors and
// SDK glue log with logrus' standard logger) log through log's handler,
// as zonestream's own lines do: one format (JSON with --log-format=json),
// one level (--log-level), and redacted (provider.RedactingHandler), as
// the applier's own lines are. Each logrus entry becomes one slog record
// with its level, message, time and fields; logrus writes nothing itself.
//
// logrus' standard logger is the process' one: the last provider built
// sets where it logs (a process builds one).
func logThroughSlog(log *slog.Logger) {
	h := provider.RedactingHandler(log.Handler())
	std := logrus.StandardLogger()
	std.ReplaceHooks(logrus.LevelHooks{})
	std.AddHook(slogHook{h})
	std.SetFormatter(silent{})
	std.SetOutput(io.Discard)
	// logrus formats nothing below its level: it stays as cheap as
	// the handler's Enabled when debug is off.
	std.SetLevel(logrus.PanicLevel)
	for _, l := range []logrus.Level{logrus.ErrorLevel, logrus.WarnLevel, logrus.InfoLevel, logrus.DebugLevel, logrus.TraceLevel} {
		if !h.Enabled(context.Background(), slogLevel(l)) {
			break
		}
		std.SetLevel(l)
	}
}

// slogLevel is the slog level of a logrus level; trace is debug (as
// --log-level=trace is), fatal and panic are error.
func slogLevel(l logrus.Level) slog.Level {
	switch l {
	case logrus.TraceLevel, logrus.DebugLevel:
		return slog.LevelDebug
	case logrus.InfoLevel:
		return slog.LevelInfo
	case logrus.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// slogHook hands every logrus entry to h.
type slogHook struct{ h slog.Handler }

func (slogHook) Levels() []logrus.Level { return logrus.AllLevels }

func (s slogHook) Fire(e *logrus.Entry) error {
	noteFatal(e)
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	level := slogLevel(e.Level)
	if !s.h.Enabled(ctx, level) {
		return nil
	}
	rec := slog.NewRecord(e.Time, level, e.Message, 0)
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := e.Data[k]
		if err, ok := v.(error); ok {
			v = err.Error()
		}
		rec.AddAttrs(slog.Any(k, v))
	}
	if err := s.h.Handle(ctx, rec); err != nil {
		return fmt.Errorf("logrus to slog: %w", err)
	}
	return nil
}

// silent is logrus' formatter once entries go to slog: nothing to write.
type silent struct{}

func (silent) Format(*logrus.Entry) ([]byte, error) { return nil, nil }
