#!/usr/bin/env bash
# Outside-client check: drive the built skilljack-mcp binary over stdio with a
# pinned third-party MCP client (the MCP Inspector CLI) and assert what it sees.
# See test/outside/README.md. Tools go into the git-ignored .tools/ folder and
# are reused on the next run when they are already at the pinned versions.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

# Pinned versions. The inspector's exact tree is pinned by package-lock.json
# beside this script; change both files together.
node_major=22
node_min_minor=19 # the inspector's engines field: node >=22.19.0
inspector_version=2.12.0

shared="$root/../shared"
corpus="$shared/corpora/anthropics-skills"
tools="$root/.tools"
bin="$tools/bin/skilljack-mcp"
work="$tools/outside"

section() { printf '\n=== %s ===\n' "$*"; }

passed=0
pass() {
	passed=$((passed + 1))
	echo "ok   $*"
}
die() {
	echo "FAIL $*" >&2
	echo "outside: $passed passed, 1 failed"
	exit 1
}

if [[ ! -d "$shared" ]]; then
	echo "outside: SKIP: $shared is missing, so there is no corpus to serve; nothing was checked."
	exit 0
fi
[[ -d "$corpus" ]] || die "corpus $corpus is missing although $shared exists"

# --- tools ---------------------------------------------------------------------

section "outside: tools (cached in .tools/)"
mkdir -p "$tools/bin" "$work"

# shellcheck source=node.sh
source "$here/node.sh"
ensure_node

insp_dir="$tools/inspector"
inspector="$insp_dir/node_modules/.bin/mcp-inspector"
# npm install, not npm ci: the lock names an optional, Windows-only package
# (napi-windows-process-start-time, wanted by vite) that the registry does not
# serve, and npm ci refuses any lock it cannot match. npm install still takes
# every version from the lock.
ensure_npm_tree @modelcontextprotocol/inspector "$inspector_version" "$here" "$insp_dir" install
[[ -x "$inspector" ]] || die "no $inspector after the install"
# Keep the inspector's own state files out of $HOME.
export MCP_CATALOG_PATH="$work/inspector-catalog.json"
export MCP_CLIENT_CONFIG_PATH="$work/inspector-client.json"

section "outside: build"
rm -f "$bin"
go build -o "$bin" . || die "go build -o $bin ."
echo "built $bin"

# --- expectations from the corpus itself --------------------------------------

# A skill is a folder one level below the corpus whose SKILL.md has a `name:`
# line in its frontmatter. Its files are the regular files below it, less
# hidden ones and node_modules, which the server never serves.
names_file="$work/corpus-names.txt"
: >"$names_file"
corpus_files=0
for md in "$corpus"/*/SKILL.md; do
	[[ -f "$md" ]] || continue
	name="$(awk '
		NR == 1 && /^---[ \t\r]*$/ { fm = 1; next }
		fm && /^---[ \t\r]*$/ { exit }
		fm && /^name:/ { sub(/^name:[ \t]*/, ""); gsub(/["\047\r]/, ""); sub(/[ \t]+$/, ""); print; exit }
	' "$md")"
	[[ -n "$name" ]] || continue
	echo "$name" >>"$names_file"
	n="$(cd "$(dirname "$md")" && find . -type f ! -path '*/.*' ! -path '*/node_modules/*' | wc -l)"
	corpus_files=$((corpus_files + n))
done
corpus_skills="$(wc -l <"$names_file" | tr -d ' ')"
# The server's skill path for a local root is <root folder name>/<skill folder>.
prefix="$(basename "$corpus")"
[[ "$corpus_skills" -gt 0 ]] || die "no SKILL.md with a name: line one level below $corpus"
echo "corpus: $corpus"
echo "corpus: $corpus_skills skills, $corpus_files files"

# --- checks --------------------------------------------------------------------

# inspect OUT [inspector options...]: run the inspector CLI against the binary
# over stdio; stdout goes to OUT, stderr (with the server's) to OUT.stderr.
# Returns the inspector's exit code.
inspect() {
	local out="$1"
	shift
	echo "\$ mcp-inspector --cli $* --format json -e HOME=.tools/outside/home -- .tools/bin/skilljack-mcp --tools=always $corpus"
	timeout 120 "$inspector" --cli "$@" --format json -e "HOME=$work/home" -- "$bin" --tools=always "$corpus" \
		>"$out" 2>"$out.stderr" </dev/null
}

# fail_with OUT MESSAGE: show what the inspector printed for OUT, then fail.
fail_with() {
	{
		echo "--- inspector stderr, with the server's (last 40 lines of $1.stderr):"
		tail -n 40 "$1.stderr"
		echo "--- inspector stdout (first 1500 bytes of $1):"
		head -c 1500 "$1"
		echo
	} >&2
	die "$2"
}

check() { node "$here/check.mjs" "$@" 2>&1; }

# Excluded scenarios (README.md): SKILLNAME:ISSUECODE pairs that --verify
# reports as an error on a skill served as designed. Nothing else is excused.
#  - claude-api:malformed-description: its description is 1068 characters,
#    over the Agent Skills 1024 limit; the server serves frontmatter verbatim
#    (SEP2640-R29) with a warning, as DESIGN.md decides for that input.
excluded=(claude-api:malformed-description)

# The server gets a scratch HOME, so no ~/.skilljack/config.json changes what
# it serves.
mkdir -p "$work/home"

eras="${OUTSIDE_ERAS:-legacy modern}"
for era in $eras; do
	section "outside: inspector over stdio, protocol era $era"
	o="$work/$era"

	inspect "$o-tools.json" --protocol-era "$era" --method tools/list ||
		fail_with "$o-tools.json" "[$era] tools/list: inspector exited $?"
	msg="$(check tools "$o-tools.json")" || fail_with "$o-tools.json" "[$era] $msg"
	pass "[$era] $msg"

	inspect "$o-prompts.json" --protocol-era "$era" --method prompts/list ||
		fail_with "$o-prompts.json" "[$era] prompts/list: inspector exited $?"
	msg="$(check prompts "$o-prompts.json")" || fail_with "$o-prompts.json" "[$era] $msg"
	pass "[$era] $msg"

	inspect "$o-skills.json" --protocol-era "$era" --method skills/list ||
		fail_with "$o-skills.json" "[$era] skills/list: inspector exited $?"
	msg="$(check skills "$o-skills.json" "$prefix" "$names_file")" ||
		fail_with "$o-skills.json" "[$era] $msg"
	pass "[$era] $msg"

	rc=0
	inspect "$o-verify.ndjson" --protocol-era "$era" \
		--method skills/list --verify --require-digests || rc=$?
	msg="$(check verify "$o-verify.ndjson" "$prefix" "$corpus_skills" "$corpus_files" "${excluded[@]}")" ||
		fail_with "$o-verify.ndjson" "[$era] skills/list --verify (inspector exit $rc): $msg"
	# Exit 7 (nonconformant) is accepted only when check.mjs found every
	# failure to be an excluded scenario; any other non-zero exit fails.
	[[ $rc -eq 0 || ($rc -eq 7 && ${#excluded[@]} -gt 0) ]] ||
		fail_with "$o-verify.ndjson" "[$era] skills/list --verify: inspector exited $rc although check.mjs accepted its reports"
	pass "[$era] $msg"
	summary="$(grep -v '^{' "$o-verify.ndjson.stderr" | grep -E 'skills? (failed|and)' | tail -n 1 || true)"
	if [[ $rc -eq 7 ]]; then
		echo "     inspector's own summary, counting the excluded scenarios as failures: $summary"
	else
		echo "     inspector's own summary: $summary"
	fi
done

section "outside: summary"
echo "served $corpus_skills skills ($corpus_files files) from $corpus"
echo "outside: $passed passed, 0 failed"
