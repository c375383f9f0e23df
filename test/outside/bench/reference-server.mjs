// The reference server for test/outside/bench-compare.sh: the official
// TypeScript SDK v2 (@modelcontextprotocol/server, pinned in package.json
// beside this file) serving one folder of skills over stdio with its own
// ext/skills loader, as its documentation shows (loadSkills + attach).
//
//   node reference-server.mjs FOLDER
//
// The skills are served under skill://<basename of FOLDER>/<skill>/..., the
// same URIs skilljack-mcp gives a local root, so one client drives both. The
// SDK does not watch the folder (SkillCatalog.reload() is manual), so there
// are no notifications/resources/updated to time.
import { basename, resolve } from 'node:path';

import { McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const folder = process.argv[2];
if (!folder) {
	console.error('usage: node reference-server.mjs FOLDER');
	process.exit(2);
}
const root = resolve(folder);

// Warnings (a skipped skill, an over-long description) go to stderr as by
// default, but only the first 20: 10,000 lines would be noise.
let warnings = 0;
const skills = await loadSkills(root, {
	prefix: basename(root),
	onWarning: (w) => {
		if (++warnings <= 20) console.error(`reference-server: warning: ${w.path}: ${w.message}`);
	},
});
console.error(`reference-server: serving ${skills.entries.length} skills from ${root} (${warnings} warnings)`);

const mcp = new McpServer({ name: 'sdk-ext-skills-reference', version: '2.4.0' });
skills.attach(mcp);
await mcp.connect(new StdioServerTransport());
