package mcpface

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The warnings as MCP log messages (issue 13 item 8). A mistake in the
// command line or the config file is one stderr line, and hosts hide
// stderr in a log file few users find; they do show a server's MCP log
// messages. So each session gets every warning of [Options.Warnings] once,
// as notifications/message at level warning, as soon as its client accepts
// that level (logging/setLevel on 2025-11-25, the per-request
// io.modelcontextprotocol/logLevel on 2026-07-28: go-sdk sends nothing to a
// client that never set a level): the ones logged so far at its first such
// message, each later one at once ([Options.WarningsAdded]) or at its next
// message. One path, [Facade.sendNewWarnings], does both. Stateless HTTP
// has no session to push to; stderr alone carries them there.

// warningLevel is the MCP log level of a warning.
const warningLevel mcp.LoggingLevel = "warning"

// acceptsAt reports whether a client that asked for level gets a message
// at want.
func acceptsAt(level, want mcp.LoggingLevel) bool {
	i := slices.Index(logLevels, level)
	return i >= 0 && i <= slices.Index(logLevels, want)
}

// sendWarnings sends req's session the warnings it has not had, if its
// client accepts them now (the request's own log level counts).
func (f *Facade) sendWarnings(ctx context.Context, req mcp.Request) {
	if f.opts.Warnings == nil {
		return
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return
	}
	level, _ := paramsMeta(req.GetParams())[mcp.MetaKeyLogLevel].(string)
	f.sendNewWarnings(ctx, ss, mcp.LoggingLevel(level))
}

// pushWarnings sends every live session the warnings it has not had, if
// its client accepts them (the level it set with logging/setLevel).
func (f *Facade) pushWarnings(ctx context.Context) {
	srv := f.srv.Load()
	if f.opts.Warnings == nil || srv == nil {
		return
	}
	for ss := range srv.Sessions() {
		f.sendNewWarnings(ctx, ss, "")
	}
}

// sendNewWarnings sends ss the warnings after the ones it was sent, when
// its client accepts level warning at level (or, when level is "", at the
// level it set). Each warning is claimed under noticeMu before it is sent,
// so concurrent calls never send one twice.
func (f *Facade) sendNewWarnings(ctx context.Context, ss *mcp.ServerSession, level mcp.LoggingLevel) {
	f.noticeMu.Lock()
	n := f.notice(ss)
	if level == "" {
		level = n.level
	}
	var todo []string
	if acceptsAt(level, warningLevel) {
		all := f.opts.Warnings()
		if n.warned < len(all) {
			todo, n.warned = all[n.warned:], len(all)
		}
	}
	f.noticeMu.Unlock()
	for _, w := range todo {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: warningLevel, Logger: serverName, Data: w}); err != nil {
			f.log.Debug("sending a warning", "error", err)
			return
		}
	}
}
