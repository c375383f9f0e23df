package config

import (
	"fmt"
	"regexp"
	"strings"
)

// placeholderRe matches a value that is one literal ${...} placeholder
// ("${user_config.skill_dirs}", "${HOME}"). An MCP host fills these in
// before it starts the server; one left as written means the host could
// not (MCPB's resolver passes an unset optional user_config field on as
// its literal text), so the value means nothing (issue 15).
var placeholderRe = regexp.MustCompile(`^\$\{[^{}]*\}$`)

// isPlaceholder reports whether v, trimmed, is one literal ${...}
// placeholder.
func isPlaceholder(v string) bool {
	return placeholderRe.MatchString(strings.TrimSpace(v))
}

// placeholderHint is the end of every placeholder warning: who left it and
// how to avoid it.
const placeholderHint = "the MCP host did not replace it (in a .mcpb bundle, give the user_config field a default)"

// dropPlaceholderArgs returns args without the ones that are a literal
// placeholder, or a flag whose value is one (--tools=${user_config.tools}),
// with one warning each: such an argument would otherwise be served as a
// skill folder that does not exist, or read as a wrong value.
func dropPlaceholderArgs(args []string) ([]string, []Warning) {
	var out []string
	var warnings []Warning
	for _, a := range args {
		v := a
		if strings.HasPrefix(a, "-") {
			_, v, _ = strings.Cut(a, "=")
		}
		if isPlaceholder(v) {
			warnings = append(warnings, Warning{Message: fmt.Sprintf("argument %q ignored: it is an unreplaced placeholder; %s", a, placeholderHint)})
			continue
		}
		out = append(out, a)
	}
	return out, warnings
}

// placeholderEnv wraps getenv so that a variable whose value is a literal
// placeholder reads as unset (like an empty one), adding one warning to
// *warnings the first time each such variable is read.
func placeholderEnv(getenv func(string) string, warnings *[]Warning) func(string) string {
	warned := map[string]bool{}
	return func(name string) string {
		v := getenv(name)
		if !isPlaceholder(v) {
			return v
		}
		if !warned[name] {
			warned[name] = true
			*warnings = append(*warnings, Warning{Message: fmt.Sprintf("environment variable %s ignored: its value %q is an unreplaced placeholder; %s", name, strings.TrimSpace(v), placeholderHint)})
		}
		return ""
	}
}
