// Host-side check of an unpacked skilljack-mcp .mcpb bundle, for
// test/outside/mcpb.sh (issue 15).
//
// Usage: node mcpb-check.mjs MCPB_PACKAGE_DIR BUNDLE_DIR FIXTURE_DIR WORK_DIR
//
// Resolves the bundle's manifest with the official host resolver
// (getMcpConfigForManifest of @anthropic-ai/mcpb, the package installed in
// MCPB_PACKAGE_DIR) twice, as a host would:
//
//   fixture  user_config {skill_dirs: [FIXTURE_DIR]}
//   empty    user_config {} (every field at its default)
//
// For each it checks that no command, argument or environment value still
// holds "${" (an unreplaced placeholder), spawns the resolved command with
// the resolved args and env (HOME is a scratch folder under WORK_DIR, so no
// config file adds sources), and asks it over MCP stdio (2025-11-25) for
// resources/list and prompts/list. With the fixture, the SKILL.md resources
// outside the bundled skill are exactly one per SKILL.md of FIXTURE_DIR,
// under skill://<fixture folder name>/; with {}, only the bundled skill is
// served. The server's stderr must have no placeholder warning. Prints one
// "ok" line per scenario; exits 1 with a reason on the first failure. Only
// Node built-ins and the installed package are used.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, bundleDir, fixtureDir, workDir] = process.argv.slice(2);
if (!workDir) {
  console.error("usage: node mcpb-check.mjs MCPB_PACKAGE_DIR BUNDLE_DIR FIXTURE_DIR WORK_DIR");
  process.exit(2);
}

function fail(msg) {
  console.error(`FAIL mcpb-check: ${msg}`);
  process.exit(1);
}

const { getMcpConfigForManifest } = await import(pathToFileURL(path.join(pkgDir, "dist", "index.js")).href);
if (typeof getMcpConfigForManifest !== "function") fail(`${pkgDir} exports no getMcpConfigForManifest`);
const manifest = JSON.parse(readFileSync(path.join(bundleDir, "manifest.json"), "utf8"));
const bundled = "skill://skilljack-docs/";

// skillMDs counts the SKILL.md files below dir (not in dot folders).
function skillMDs(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += skillMDs(p);
    else if (e.name === "SKILL.md") n++;
  }
  return n;
}

// session spawns command and sends requests (JSON-RPC objects without
// ids); resolves with the results in order and the server's stderr.
function session(command, args, env, requests) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const results = new Map();
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no answer within 60 s; stderr:\n${err}`));
    }, 60000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      let nl;
      while ((nl = out.indexOf("\n")) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.id === undefined) continue;
        results.set(msg.id, msg);
        if (results.size === requests.length + 1) {
          clearTimeout(timer);
          child.stdin.end();
          child.on("close", () => resolve({ results: requests.map((_, i) => results.get(i + 2)), stderr: err }));
        }
      }
    });
    const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcpb-check", version: "1" } },
    });
    send({ method: "notifications/initialized" });
    requests.forEach((r, i) => send({ id: i + 2, ...r }));
  });
}

const home = path.join(workDir, "home");
mkdirSync(home, { recursive: true });
const systemDirs = { HOME: home, DESKTOP: path.join(home, "Desktop"), DOCUMENTS: path.join(home, "Documents"), DOWNLOADS: path.join(home, "Downloads") };
const fixturePrefix = `skill://${path.basename(fixtureDir)}/`;
const fixtureSkills = skillMDs(fixtureDir);
if (!statSync(fixtureDir).isDirectory() || fixtureSkills === 0) fail(`${fixtureDir} holds no SKILL.md`);

for (const [name, userConfig, wantFixture] of [
  ["fixture", { skill_dirs: [path.resolve(fixtureDir)] }, fixtureSkills],
  ["empty", {}, 0],
]) {
  const cfg = await getMcpConfigForManifest({ manifest, extensionPath: path.resolve(bundleDir), systemDirs, userConfig, pathSeparator: path.sep });
  if (!cfg) fail(`[${name}] the resolver returned no config (a required user_config field unset?)`);
  const values = [cfg.command, ...(cfg.args ?? []), ...Object.values(cfg.env ?? {})];
  const left = values.filter((v) => String(v).includes("${"));
  if (left.length) fail(`[${name}] unreplaced placeholders in the resolved config: ${JSON.stringify(left)}\n${JSON.stringify(cfg, null, 2)}`);
  const env = { PATH: process.env.PATH, HOME: home, ...(cfg.env ?? {}) };
  let got;
  try {
    got = await session(cfg.command, cfg.args ?? [], env, [{ method: "resources/list" }, { method: "prompts/list" }]);
  } catch (e) {
    fail(`[${name}] ${cfg.command} ${JSON.stringify(cfg.args)}: ${e.message}`);
  }
  const [resources, prompts] = got.results;
  if (!resources?.result || !prompts?.result) fail(`[${name}] no resources/list or prompts/list result: ${JSON.stringify(got.results)}\nstderr:\n${got.stderr}`);
  const mds = resources.result.resources.map((r) => r.uri).filter((u) => u.endsWith("/SKILL.md"));
  const own = mds.filter((u) => !u.startsWith(bundled));
  const wrong = own.filter((u) => !u.startsWith(fixturePrefix));
  if (!mds.some((u) => u.startsWith(bundled))) fail(`[${name}] the bundled skill is not served: ${JSON.stringify(mds)}`);
  if (wrong.length || own.length !== wantFixture) {
    fail(`[${name}] served SKILL.md resources ${JSON.stringify(own)}, want ${wantFixture} under ${fixturePrefix}\nstderr:\n${got.stderr}`);
  }
  if (!prompts.result.prompts.some((p) => p.name === "skill")) fail(`[${name}] no prompt "skill"`);
  if (/placeholder/.test(got.stderr)) fail(`[${name}] the server warned about a placeholder:\n${got.stderr}`);
  console.log(`ok   [${name}] resolved ${path.relative(bundleDir, cfg.command)} ${JSON.stringify(cfg.args)} env ${Object.keys(cfg.env ?? {}).join(",")}: ${own.length} fixture skills + the bundled one served, no \${ left`);
}
