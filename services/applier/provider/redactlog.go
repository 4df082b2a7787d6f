package provider

import (
	"context"
	"fmt"
	"log/slog"
)

// RedactingHandler returns h with every message and attribute value that
// is text (a string, an error, a fmt.Stringer, a []string) redacted
// (Redact) before h writes it. The applier logs through it, and gives it
// to its provider: a provider logs its own errors too (a webhook request
// retried), and log lines leave the process. Other values (numbers,
// durations) are written as they are.
func RedactingHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*redactingHandler); ok {
		return h
	}
	return &redactingHandler{h: h}
}

// RedactingLogger is logger with a RedactingHandler.
func RedactingLogger(logger *slog.Logger) *slog.Logger {
	return slog.New(RedactingHandler(logger.Handler()))
}

type redactingHandler struct{ h slog.Handler }

func (r *redactingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return r.h.Enabled(ctx, level)
}

func (r *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = redactAttr(a)
	}
	return &redactingHandler{h: r.h.WithAttrs(out)}
}

func (r *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: r.h.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Redact(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, Redact(x.String()))
		case []string:
			out := make([]string, len(x))
			for i, s := range x {
				out[i] = Redact(s)
			}
			return slog.Any(a.Key, out)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
