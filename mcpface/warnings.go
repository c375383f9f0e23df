package mcpface

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The startup warnings as MCP log messages (issue 13 item 8). A mistake in
// the command line or the config file is one stderr line, and hosts hide
// stderr in a log file few users find; they do show a server's MCP log
// messages. So each session gets the warnings of [Options.Warnings], once,
// as notifications/message at level warning, at its first message after
// which the client accepts that level (logging/setLevel on 2025-11-25, the
// per-request io.modelcontextprotocol/logLevel on 2026-07-28: go-sdk sends
// nothing to a client that never set a level). Stateless HTTP has no
// session to push to; stderr alone carries them there.

// warningLevel is the MCP log level of a startup warning.
const warningLevel mcp.LoggingLevel = "warning"

// acceptsAt reports whether a client that asked for level gets a message
// at want.
func acceptsAt(level, want mcp.LoggingLevel) bool {
	i := slices.Index(logLevels, level)
	return i >= 0 && i <= slices.Index(logLevels, want)
}

// sendWarnings sends the startup warnings to req's session, if it has not
// had them, there are some, and its client accepts them now.
func (f *Facade) sendWarnings(ctx context.Context, req mcp.Request) {
	if f.opts.Warnings == nil {
		return
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return
	}
	f.noticeMu.Lock()
	n := f.notice(ss)
	sendNow := n.warningsDue(requestLevel(n, paramsMeta(req.GetParams())))
	if sendNow {
		n.warned = true
	}
	f.noticeMu.Unlock()
	if !sendNow {
		return
	}
	for _, w := range f.opts.Warnings() {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: warningLevel, Logger: serverName, Data: w}); err != nil {
			f.log.Debug("sending a startup warning", "error", err)
			return
		}
	}
}
