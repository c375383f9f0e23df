package main

import (
	"runtime"
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
const redacted = "REDACTED"

// secretWords mark a NAME=VALUE or --name=VALUE argument whose value is
// left out of a trace.
var secretWords = []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "auth", "credential"}

// redactArgs returns args fit for a trace: every occurrence of a secret
// (GITHUB_TOKEN, should it have been pasted into an argument), the user
// info of a URL (https://user:token@host/...) and the value of a
// NAME=VALUE or --name=VALUE argument whose name looks like a secret's are
// replaced by "REDACTED". The environment is never recorded.
func redactArgs(args []string, secrets ...string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, s := range secrets {
			if s = strings.TrimSpace(s); s != "" {
				a = strings.ReplaceAll(a, s, redacted)
			}
		}
		if name, _, ok := strings.Cut(a, "="); ok && !strings.Contains(name, "/") {
			lower := strings.ToLower(name)
			for _, w := range secretWords {
				if strings.Contains(lower, w) {
					a = name + "=" + redacted
					break
				}
			}
		}
		out[i] = redactUserInfo(a)
	}
	return out
}

// redactUserInfo replaces the user info of every URL in a.
func redactUserInfo(a string) string {
	var b strings.Builder
	for {
		i := strings.Index(a, "://")
		if i < 0 {
			b.WriteString(a)
			return b.String()
		}
		b.WriteString(a[:i+3])
		a = a[i+3:]
		end := strings.IndexAny(a, "/?#")
		if end < 0 {
			end = len(a)
		}
		if at := strings.LastIndex(a[:end], "@"); at >= 0 {
			b.WriteString(redacted)
			a = a[at:]
		}
	}
}
