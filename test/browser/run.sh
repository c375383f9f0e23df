#!/usr/bin/env bash
# Real-browser check of the MCP Apps views (issue 14): installs what it needs
# (Debian's chromium when missing, the pinned @modelcontextprotocol/ext-apps
# into .tools/browser), then runs this module's Go tests, which build the
# server, bundle the official AppBridge and drive headless Chromium.
# Screenshots land in test/browser/out/ (kept as CI artifacts).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

tools="$root/.tools"
ext_apps_version=2.0.4 # change together with package.json and package-lock.json here

die() {
	echo "FAIL $*" >&2
	exit 1
}

section() { printf '\n=== %s ===\n' "$*"; }

section "browser: chromium"
# shellcheck source=../outside/chromium.sh
source "$root/test/outside/chromium.sh"
ensure_chromium

section "browser: host bridge (cached in .tools/browser)"
command -v npm >/dev/null || die "npm is needed to install @modelcontextprotocol/ext-apps"
# shellcheck source=../outside/node.sh
source "$root/test/outside/node.sh"
ensure_npm_tree @modelcontextprotocol/ext-apps "$ext_apps_version" "$here" "$tools/browser" ci

section "browser: go vet and go test (test/browser module)"
cd "$here"
go vet ./...
rm -rf out
mkdir -p "$tools/browser"
log="$tools/browser/go-test.log"
status=0
go test -count=1 -v ./... >"$log" 2>&1 || status=$?
# Subtest verdicts and failure lines; the whole log stays in $log.
grep -E '^\s*(--- |ok |FAIL|panic)|_test\.go:[0-9]+:' "$log" || true
if [[ $status -ne 0 ]]; then
	echo "browser: FAILED (whole log: $log)"
	tail -n 80 "$log"
	exit 1
fi
echo "browser: screenshots in $here/out:"
ls -1 out
