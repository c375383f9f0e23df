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
//     description, never both.
//
// # State
//
// The facade holds one immutable snapshot (the catalog plus values derived
// from it once) behind an atomic pointer, and the SDK registrations. Every
// request loads the snapshot once at its top. File bytes are read from disk
// when a request needs them, looked up only through the catalog manifest, and
// served only when their SHA-256 equals the manifest digest.
//
// # Use
//
//	f := mcpface.New(&mcpface.Options{Version: version, Logger: log})
//	go f.Run(ctx, catalogs, updates)
//	srv, err := f.Server(ctx) // waits for the first catalog
//	if err != nil {
//		return err
//	}
//	return srv.Run(ctx, &mcp.StdioTransport{})
package mcpface
