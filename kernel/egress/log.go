package egress

import (
	"context"
	"fmt"
	"log/slog"
)

// LogHandler returns a slog.Handler that removes the secrets of secrets()
// — asked at every record, so that values registered later count — from
// each record's message and every attribute (strings, errors and
// fmt.Stringers written as text, groups at any depth) before next writes
// it: a log line can quote an upstream's error, and an upstream can echo a
// secret. Records below next's level cost nothing more.
func LogHandler(next slog.Handler, secrets func() *Secrets) slog.Handler {
	return &logHandler{next: next, secrets: secrets}
}

type logHandler struct {
	next    slog.Handler
	secrets func() *Secrets
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	sec := h.secrets()
	if sec.Len() == 0 {
		return h.next.Handle(ctx, r)
	}
	msg, _ := sec.Scrub(r.Message)
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(sec, a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	sec := h.secrets()
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = scrubAttr(sec, a)
	}
	return &logHandler{next: h.next.WithAttrs(clean), secrets: h.secrets}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name), secrets: h.secrets}
}

// scrubAttr is a with its text scrubbed.
func scrubAttr(sec *Secrets, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		s, _ := sec.Scrub(v.String())
		return slog.String(a.Key, s)
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = scrubAttr(sec, ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			s, _ := sec.Scrub(x.Error())
			return slog.String(a.Key, s)
		case fmt.Stringer:
			s, _ := sec.Scrub(x.String())
			return slog.String(a.Key, s)
		case []string:
			out := make([]string, len(x))
			for i, s := range x {
				out[i], _ = sec.Scrub(s)
			}
			return slog.Any(a.Key, out)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
