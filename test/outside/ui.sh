#!/usr/bin/env bash
# MCP Apps in a real, third-party host: the pinned MCP Inspector web UI
# (@modelcontextprotocol/inspector 2.12.0, an MCP Apps host) runs the built
# skilljack-mcp over stdio; playwright-core drives it with the system
# Chromium (ui/ui.mjs): open each app, make one change through it, check
# config.json. HOME is an isolated folder under .tools/ui. Screenshots are
# left in .tools/ui/out (CI artifacts).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

# Pinned versions: the inspector as in run.sh (tree pinned by package-lock.json
# here); playwright-core by ui/package.json + ui/package-lock.json.
node_major=22
node_min_minor=19
inspector_version=2.12.0
playwright_version=1.65.1

tools="$root/.tools"
bin="$tools/bin/skilljack-mcp"
work="$tools/ui"

die() {
	echo "FAIL $*" >&2
	exit 1
}
section() { printf '\n=== %s ===\n' "$*"; }

section "ui: chromium"
# shellcheck source=chromium.sh
source "$here/chromium.sh"
ensure_chromium

section "ui: tools (cached in .tools/)"
# shellcheck source=node.sh
source "$here/node.sh"
ensure_node
ensure_npm_tree @modelcontextprotocol/inspector "$inspector_version" "$here" "$tools/inspector" install
ensure_npm_tree playwright-core "$playwright_version" "$here/ui" "$work/driver" ci
inspector="$tools/inspector/node_modules/.bin/mcp-inspector"
[[ -x "$inspector" ]] || die "no $inspector after the install"

section "ui: build"
mkdir -p "$tools/bin"
go build -o "$bin" . || die "go build -o $bin ."
echo "built $bin"

section "ui: inspector web UI"
rm -rf "$work/home" "$work/skills" "$work/out" "$work/storage"
mkdir -p "$work/home/.skilljack" "$work/skills" "$work/out"
cp -R test/browser/testdata/skills-a "$work/skills/"
printf '{\n  "skillDirectories": ["%s"]\n}\n' "$work/skills/skills-a" >"$work/home/.skilljack/config.json"

# free_port prints a loopback port nobody listens on right now.
free_port() {
	node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}
client_port="$(free_port)"
log="$work/inspector.log"
: >"$log"
CLIENT_PORT="$client_port" MCP_SANDBOX_PORT="$(free_port)" MCP_APP_ORIGIN_PORT="$(free_port)" \
	MCP_AUTO_OPEN_ENABLED=false DANGEROUSLY_OMIT_AUTH=true MCP_STORAGE_DIR="$work/storage" \
	MCP_INSPECTOR_SECRET_STORE=memory \
	"$inspector" --web -e HOME="$work/home" -e USERPROFILE="$work/home" -- "$bin" >"$log" 2>&1 &
inspector_pid=$!
trap 'kill "$inspector_pid" 2>/dev/null || true; wait "$inspector_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	grep -q "is up and running" "$log" && break
	kill -0 "$inspector_pid" 2>/dev/null || { cat "$log"; die "the inspector exited"; }
	sleep 0.2
done
grep -q "is up and running" "$log" || { cat "$log"; die "the inspector did not start in 20 s"; }
echo "inspector web UI on http://127.0.0.1:$client_port/ (pid $inspector_pid)"

section "ui: drive the apps"
UI_TOOLS="$work/driver" UI_URL="http://127.0.0.1:$client_port/" UI_CONFIG="$work/home/.skilljack/config.json" \
	UI_OUT="$work/out" CHROMIUM="$chromium" node "$here/ui/ui.mjs" || {
	echo "--- inspector log ---"
	cat "$log"
	die "ui.mjs"
}
echo "screenshots in $work/out"
