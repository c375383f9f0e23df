#!/usr/bin/env bash
# MCPB check (issue 15): the .mcpb bundle test/release builds, checked with
# the pinned official MCPB tools (@anthropic-ai/mcpb, pinned by
# mcpb/package-lock.json beside this script, installed into .tools/mcpb):
#
#   1. mcpb validate on the staged manifest (must pass);
#   2. mcpb pack of the staged folder, mcpb unpack of both that archive and
#      our reproducible skilljack-mcp.mcpb (same files, binaries still
#      executable), mcpb info of ours;
#   3. mcpb-check.mjs: the package's own host resolver
#      (getMcpConfigForManifest) on the unpacked bundle for
#      {skill_dirs: [fixture]} and for {}, each result spawned and asked over
#      MCP: the fixture's skills (or only the bundled skill) are served and no
#      argument or environment value holds "${".
#
#   test/outside/mcpb.sh                       # builds the release into .tools/mcpb-run/dist
#   MCPB_DIST=dist test/outside/mcpb.sh        # checks an existing release folder
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

# Node matches run.sh's so that the scripts share .tools/node22.
node_major=22
node_min_minor=19
mcpb_version=2.1.2

tools="$root/.tools"
work="$tools/mcpb-run"
fixture="$here/fixtures/conformance-skills"

passed=0
pass() {
	passed=$((passed + 1))
	echo "ok   $*"
}
die() {
	echo "FAIL $*" >&2
	echo "mcpb: $passed passed, 1 failed"
	exit 1
}
section() { printf '\n=== %s ===\n' "$*"; }

section "mcpb: tools (cached in .tools/)"
mkdir -p "$work"
# shellcheck source=node.sh
source "$here/node.sh"
ensure_node
ensure_npm_tree @anthropic-ai/mcpb "$mcpb_version" "$here/mcpb" "$tools/mcpb" ci
mcpb="$tools/mcpb/node_modules/.bin/mcpb"
pkg="$tools/mcpb/node_modules/@anthropic-ai/mcpb"
[[ -x "$mcpb" ]] || die "no $mcpb after the install"

dist="${MCPB_DIST:-}"
if [[ -z "$dist" ]]; then
	section "mcpb: release build"
	dist="$work/dist"
	test/release/release.sh "$dist" || die "test/release/release.sh $dist"
fi
bundle="$dist/bundle"
archive="$dist/skilljack-mcp.mcpb"
[[ -f "$bundle/manifest.json" && -f "$archive" ]] || die "$dist holds no bundle/manifest.json and skilljack-mcp.mcpb (run test/release/release.sh)"

section "mcpb: official CLI $mcpb_version"
out="$("$mcpb" validate "$bundle/manifest.json" 2>&1)" || die "mcpb validate: $out"
pass "mcpb validate $bundle/manifest.json: $out"

rm -rf "$work/packed" "$work/packed.mcpb" "$work/unpacked"
out="$("$mcpb" pack "$bundle" "$work/packed.mcpb" 2>&1)" || die "mcpb pack: $out"
pass "mcpb pack $bundle"
"$mcpb" unpack "$work/packed.mcpb" "$work/packed" >/dev/null || die "mcpb unpack of the packed bundle"
"$mcpb" unpack "$archive" "$work/unpacked" >/dev/null || die "mcpb unpack $archive"
# listing DIR: every file with its permission bits, relative to DIR.
listing() { (cd "$1" && find . -type f -printf '%m %p\n' | sort); }
[[ "$(listing "$work/unpacked")" == "$(listing "$bundle")" ]] ||
	die "mcpb unpack $archive does not give the staged files and modes:"$'\n'"$(diff <(listing "$bundle") <(listing "$work/unpacked") || true)"
[[ "$(listing "$work/packed")" == "$(listing "$bundle")" ]] ||
	die "mcpb pack + unpack does not give the staged files and modes:"$'\n'"$(diff <(listing "$bundle") <(listing "$work/packed") || true)"
diff -r "$bundle" "$work/unpacked" >/dev/null || die "unpacked $archive differs from the staged folder"
pass "mcpb unpack: $archive and mcpb's own pack give the staged files, binaries executable"
out="$("$mcpb" info "$archive" 2>&1)" || die "mcpb info $archive: $out"
pass "mcpb info: $(echo "$out" | tr '\n' ' ')"

section "mcpb: host resolver + MCP (mcpb-check.mjs)"
for b in unpacked packed; do
	rm -rf "$work/check-$b"
	mkdir -p "$work/check-$b"
	out="$(node "$here/mcpb-check.mjs" "$pkg" "$work/$b" "$fixture" "$work/check-$b" 2>&1)" || die "mcpb-check.mjs on the $b bundle: $out"
	while IFS= read -r line; do pass "[$b] ${line#ok   }"; done <<<"$out"
done

echo
echo "mcpb: $passed passed, 0 failed"
