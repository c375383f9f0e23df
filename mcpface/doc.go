// Package mcpface is the MCP facade of skilljack: the only package that
// imports the MCP SDK. It turns the current [events.Catalog] into an MCP
// server that speaks both protocol eras (2025-11-25 with initialize,
// 2026-07-28 with server/discover and per-request _meta).
//
// # Surface
//
//   - tools load-skill and skill-resource (per --tools: auto, always, never);
//   - the prompt skill (with completion of its name argument) and one prompt
//     per user-invocable skill;
//   - one resource per served file, skill://index.json and the template
//     skill://{+path}; subscriptions;
//   - the SEP-2640 methods skills/list, skills/get and
//     resources/directory/read, announced by the capability
//     extensions["io.modelcontextprotocol/skills"];
//   - the <available_skills> catalog in the instructions or in the load-skill
//     description, never both;
//   - on stdio, unless static, the MCP Apps tools skill-config and
//     skill-display with their ui:// views, and nine app-only tools that
//     change the configuration by publishing config.command and answer once
//     the catalog of the change is served; a client that does not declare
//     extensions["io.modelcontextprotocol/ui"] neither lists nor calls the
//     app-only ones (apps.go).
//
// A skill:// URI in a request is looked up in the catalog manifest after each
// of its segments is percent-decoded and encoded again the way the catalog
// encodes it, so equivalent spellings name the same file; a segment that is
// empty, "." or ".." never matches, and nothing is resolved against a path.
//
// # Transport
//
// [NewStdioTransport] wraps the SDK's newline-delimited stdio framing so that
// a malformed line is answered with a JSON-RPC error instead of ending the
// session, replies to requests already read are written before the end of
// stdin ends the session, and no error leaves with code 0.
//
// [Facade.StdioTransport] is the same transport with a fast lane: for an
// initialized session, a well-formed skills/list, skills/get,
// resources/read or ping is answered in the transport itself, from the
// current snapshot through the same functions the handlers use, with the
// bytes the SDK's path would write; anything unusual (see fastlane.go)
// passes to the SDK. It spares a request the SDK's repeated decoding and
// middleware chain, which cost ten times the answer itself (issue 12).
//
// [Facade.HTTPHandler] serves the same surface over stateless Streamable
// HTTP (POST /mcp, both eras, plus GET /healthz): one server per catalog
// version, built on the first request that sees that version, with fresh
// instructions and listChanged and subscribe false; no sessions, nothing
// pushed. Every refusal, the handler's own or the SDK's, is a 4xx with a
// JSON-RPC error body. In a cluster (issue 16), /healthz also says which
// cluster and node answer and whether the node leads ([HTTPOptions.Cluster]),
// and every file is read by digest from [Options.Files] instead of disk.
//
// # State
//
// The facade holds one immutable snapshot (the catalog plus values derived
// from it once, reading no file: MIME types come from the catalog) behind an
// atomic pointer, and the SDK registrations. Every request loads the
// snapshot once at its top. A SKILL.md is served from the bytes the catalog
// carries, which the hasher hashed into its digest (its size and mtime on
// disk are only looked at to wait for the next catalog after an edit). A
// supporting file's
// bytes are read from disk when a request needs them, looked up only
// through the catalog manifest, opened only through actors/skill's opener
// (the containment the hasher uses), and served only when their SHA-256
// equals the manifest digest.
//
// # Notifications and subscriptions
//
// [Facade.SetCatalog] sends tools/list_changed, prompts/list_changed and
// resources/list_changed only when what the client lists changed (never the
// first two with [Options.Static]). On 2025-11-25 they go to every session;
// on 2026-07-28 only on a subscriptions/listen stream that asked for them
// (the SDK's routing).
//
// Resource subscriptions come from resources/subscribe (2025-11-25) or the
// resourceSubscriptions of subscriptions/listen (2026-07-28); both run the
// same handler, which accepts only served URIs (else -32602, recording
// nothing) and at most 1000 per session. Which resources changed, the
// skill://index.json included, is decided by the notifier alone; [Facade.Run]
// relays each [events.ResourcesUpdated] as notifications/resources/updated,
// holding it until the catalog of its version is served, so a read after the
// notification returns the new bytes. For a URI the event lists as Gone (its
// skill went), the subscribers get that notification and the subscription is
// then dropped; the skill coming back does not revive it.
//
// # Use
//
//	f := mcpface.New(&mcpface.Options{Version: version, Logger: log, Publisher: bus})
//	go f.Run(ctx, catalogs, updates)
//	go f.RunConfig(ctx, applied, views) // config.applied, config.view
//	srv, err := f.Server(ctx) // waits for the first catalog
//	if err != nil {
//		return err
//	}
//	return srv.Run(ctx, f.StdioTransport(os.Stdin, os.Stdout, log))
package mcpface
