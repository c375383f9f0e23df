package config

import (
	"strings"
	"testing"
)

// Issue 10: secrets. No error of the URL parsers quotes user info.
func TestParseURLErrorsHideUserInfo(t *testing.T) {
	const tok = "ghp_CANARYtok3n9876543210"
	for _, raw := range []string{
		"https://x-access-token:" + tok + "@github.com/acme/repo",
		"https://" + tok + "@example.com/.well-known/agent-skills/",
		"http://u:" + tok + "@example.com/",
		"https://u:" + tok + "@exa mple.com/%zz",
	} {
		_, err := ParseWellKnownURL(raw, false)
		if err == nil || strings.Contains(err.Error(), tok) {
			t.Errorf("ParseWellKnownURL(%q) = %v, want an error without the token", raw, err)
		}
		_, err = ParseGitHubURL(raw)
		if err == nil || strings.Contains(err.Error(), tok) {
			t.Errorf("ParseGitHubURL(%q) = %v, want an error without the token", raw, err)
		}
	}
	_, err := ParseGitHubURL("u:" + tok + "@github.com/acme/repo")
	if err == nil || strings.Contains(err.Error(), tok) {
		t.Errorf("ParseGitHubURL without a scheme = %v, want an error without the token", err)
	}
}

func TestRedactUserInfo(t *testing.T) {
	for in, want := range map[string]string{
		"see https://u:p@h/x and http://a@b?q": "see https://REDACTED@h/x and http://REDACTED@b?q",
		`{"l":"https://t@h","m":"a@b"}`:        `{"l":"https://REDACTED@h","m":"a@b"}`,
		"https://h/x@y":                        "https://h/x@y",
		"no url, mail a@b.c":                   "no url, mail a@b.c",
		"https://u:p@h":                        "https://REDACTED@h",
	} {
		if got := RedactUserInfo(in); got != want {
			t.Errorf("RedactUserInfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnknownFlagHidesValue(t *testing.T) {
	const tok = "ghp_CANARYtok3n9876543210"
	_, warnings, err := Load(LoadOptions{Args: []string{"--x-token=" + tok}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 {
		t.Fatal("no warning for an unknown flag")
	}
	for _, w := range warnings {
		if strings.Contains(w.Message, tok) {
			t.Errorf("warning %q shows the value", w.Message)
		}
	}
}
