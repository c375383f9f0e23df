package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
)

// traceStarted is the first line of a trace (issue 13 item 13): the
// version, the build and the arguments, without secrets.
func traceStarted(set config.Settings, args []string) events.TraceStarted {
	transport := "stdio"
	if set.HTTP {
		transport = "http"
	}
	return events.TraceStarted{
		Version:   buildVersion(),
		Args:      redactArgs(args, set.Config.GitHub.Token),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Transport: transport,
		TraceMCP:  set.TraceMCP,
	}
}

// redacted replaces a secret in a recorded argument.
const redacted = config.Redacted

// minSecret is the shortest secret searched for in text: a shorter one
// would blot out ordinary words.
const minSecret = 8

// redactor removes secrets from text bound for stderr, MCP clients or a
// trace (issue 10: secrets): every occurrence of a secret (GITHUB_TOKEN)
// and the user info of every URL ([config.RedactUserInfo]) become
// "REDACTED".
type redactor struct{ secrets []string }

func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) >= minSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// text returns s redacted.
func (r redactor) text(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return config.RedactUserInfo(s)
}

// bytes returns b redacted: a trace line ([events.TraceRedact]).
func (r redactor) bytes(b []byte) []byte {
	hit := bytes.Contains(b, []byte("://"))
	for _, sec := range r.secrets {
		hit = hit || bytes.Contains(b, []byte(sec))
	}
	if !hit {
		return b
	}
	return []byte(r.text(string(b)))
}

// secretWords mark a NAME=VALUE or --name=VALUE argument whose value is
// left out of a trace.
var secretWords = []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "auth", "credential"}

// redactArgs returns args fit for a trace: every occurrence of a secret
// (GITHUB_TOKEN, should it have been pasted into an argument), the user
// info of a URL (https://user:token@host/...) and the value of a
// NAME=VALUE or --name=VALUE argument whose name looks like a secret's are
// replaced by "REDACTED". The environment is never recorded.
func redactArgs(args []string, secrets ...string) []string {
	r := newRedactor(secrets...)
	out := make([]string, len(args))
	for i, a := range args {
		if name, _, ok := strings.Cut(a, "="); ok && !strings.Contains(name, "/") {
			lower := strings.ToLower(name)
			for _, w := range secretWords {
				if strings.Contains(lower, w) {
					a = name + "=" + redacted
					break
				}
			}
		}
		out[i] = r.text(a)
	}
	return out
}

// redactHandler is the outermost slog.Handler: it hands on each record
// with the message and every string, error or other attribute value
// redacted, groups included, so that neither stderr nor the warnings sent
// to clients ([warnTee]) show a secret (issue 10: secrets).
type redactHandler struct {
	next slog.Handler
	r    redactor
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return redactHandler{h.next.WithAttrs(red), h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.next.WithGroup(name), h.r}
}

// attr returns a redacted.
func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprintf("%+v", v.Any())
		}
		if red := h.r.text(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactedError is an error whose text is redacted; errors.Is and As see
// the original.
type redactedError struct {
	err error
	r   redactor
}

func (e redactedError) Error() string { return e.r.text(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
