package mcpface

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The notice that --tools=auto hides the tools (issue 13 item 3). A client
// that declares the skills extension, as the MCP Inspector does, gets an
// empty tools/list and "unknown tool" for load-skill; without a word that is
// the first thing a new user takes for a bug. So, once per session, the
// server says so on stderr and, as soon as the client accepts log messages
// at notice level (logging/setLevel on 2025-11-25, the per-request
// io.modelcontextprotocol/logLevel on 2026-07-28), in one MCP
// notifications/message. Over stateless HTTP there is no session: the
// stderr line is written once per process and nothing is pushed.

// hiddenToolsText is the notice, for the client named client.
func hiddenToolsText(client string) string {
	return fmt.Sprintf("%s declares the MCP skills extension (%s), so --tools=auto hides the load-skill and skill-resource tools from it: "+
		"it loads skills itself through skills/list and resources/read, so tools/list offers neither. "+
		"Start the server with --tools=always (or SKILLJACK_TOOLS=always) to offer the tools anyway.", client, SkillsExtension)
}

// noticeLevel is the MCP log level of the notice: normal but significant.
const noticeLevel mcp.LoggingLevel = "notice"

// logLevels are the MCP log levels, least severe first (RFC 5424 order).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// accepts reports whether a client that asked for level gets a message at
// noticeLevel; "" (never asked) gets nothing, as go-sdk decides.
func accepts(level mcp.LoggingLevel) bool {
	i := slices.Index(logLevels, level)
	return i >= 0 && i <= slices.Index(logLevels, noticeLevel)
}

// toolsNotice is what one session has been told.
type toolsNotice struct {
	logged bool             // the stderr line is written
	sent   bool             // the notifications/message is sent
	level  mcp.LoggingLevel // the level the client set with logging/setLevel
	warned int              // how many of Options.Warnings are sent (warnings.go)
}

// clientAware is every *mcp.ServerRequest: its client's capabilities and
// name, from the request's _meta or the session's initialize.
type clientAware interface {
	ClientCapabilities() *mcp.ClientCapabilities
	ClientInfo() *mcp.Implementation
}

// toolsNoticeMiddleware gives the notice on the first message of a session
// (after initialize) whose client declares the skills extension while
// --tools=auto hides the tools from it, and sends the MCP log message at
// the first such message after which the client accepts it.
func (f *Facade) toolsNoticeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" || (!f.toolsAuto() && f.opts.Warnings == nil) {
			return next(ctx, method, req)
		}
		if method != "logging/setLevel" {
			f.noticeHiddenTools(ctx, req)
			f.sendWarnings(ctx, req)
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && err == nil && p != nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				f.noticeMu.Lock()
				f.notice(ss).level = p.Level
				f.noticeMu.Unlock()
			}
		}
		f.noticeHiddenTools(ctx, req)
		f.sendWarnings(ctx, req)
		return res, err
	}
}

// notice returns the record of ss, made on first use; noticeMu is held.
func (f *Facade) notice(ss *mcp.ServerSession) *toolsNotice {
	if f.notices == nil {
		f.notices = make(map[*mcp.ServerSession]*toolsNotice)
	}
	n := f.notices[ss]
	if n == nil {
		// A new session: drop the records of those that ended, so the map
		// stays as large as the live sessions.
		if srv := f.srv.Load(); srv != nil {
			live := make(map[*mcp.ServerSession]bool)
			for s := range srv.Sessions() {
				live[s] = true
			}
			for s := range f.notices {
				if !live[s] {
					delete(f.notices, s)
				}
			}
		}
		n = &toolsNotice{}
		f.notices[ss] = n
	}
	return n
}

// noticeHiddenTools gives the notice for req if its client has the tools
// hidden and has not been told yet.
func (f *Facade) noticeHiddenTools(ctx context.Context, req mcp.Request) {
	ca, ok := req.(clientAware)
	if !ok || !f.hideTools(ca.ClientCapabilities()) {
		return
	}
	client := "this client"
	if info := ca.ClientInfo(); info != nil && info.Name != "" {
		client = fmt.Sprintf("client %q", clip(info.Name))
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	f.noticeMu.Lock()
	var n *toolsNotice
	if ss == nil {
		// Stateless HTTP: one record for the process.
		n = &f.httpNotice
	} else {
		n = f.notice(ss)
	}
	logNow, sendNow := n.hiddenDue(requestLevel(n, paramsMeta(req.GetParams())))
	n.logged = true
	sendNow = sendNow && ss != nil
	if sendNow {
		n.sent = true
	}
	f.noticeMu.Unlock()
	text := hiddenToolsText(client)
	if logNow {
		f.log.Info(text)
	}
	if sendNow {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: noticeLevel, Logger: serverName, Data: text}); err != nil {
			f.log.Debug("sending the hidden-tools notice", "error", err)
		}
	}
}

// requestLevel is the MCP log level a request with _meta meta is answered
// at in the session n records: its io.modelcontextprotocol/logLevel on
// 2026-07-28, else the level set with logging/setLevel.
func requestLevel(n *toolsNotice, meta mcp.Meta) mcp.LoggingLevel {
	if v, ok := meta[mcp.MetaKeyLogLevel].(string); ok {
		return mcp.LoggingLevel(v)
	}
	return n.level
}

// hiddenDue reports whether the hidden-tools notice is still to be logged
// on stderr, and whether it is to be sent now to a client answered at
// level.
func (n *toolsNotice) hiddenDue(level mcp.LoggingLevel) (logNow, sendNow bool) {
	return !n.logged, !n.sent && accepts(level)
}

// warningsDue reports whether some of the total warnings logged so far
// are still to be sent to a client answered at level.
func (n *toolsNotice) warningsDue(level mcp.LoggingLevel, total int) bool {
	return n.warned < total && acceptsAt(level, warningLevel)
}

// noticeIdle reports whether [Facade.toolsNoticeMiddleware] would do
// nothing for a request of session ss whose client has capabilities caps
// and whose params carry _meta meta: nothing to log, nothing to send. The
// stdio fast lane (fastlane.go) answers only such requests.
func (f *Facade) noticeIdle(ss *mcp.ServerSession, caps *mcp.ClientCapabilities, meta mcp.Meta) bool {
	if !f.toolsAuto() && f.opts.Warnings == nil {
		return true
	}
	f.noticeMu.Lock()
	defer f.noticeMu.Unlock()
	n := f.notices[ss]
	if n == nil {
		n = &toolsNotice{} // a session not seen yet
	}
	level := requestLevel(n, meta)
	if logNow, sendNow := n.hiddenDue(level); f.hideTools(caps) && (logNow || sendNow) {
		return false
	}
	return f.opts.Warnings == nil || !n.warningsDue(level, len(f.opts.Warnings()))
}
