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
# The corpora served, each on its own: folder names under $shared/corpora, or
# folders relative to the repository root (the generated look-alikes of
# OpenAI's and Microsoft's collections in test/testdata, issue 13).
corpora="${OUTSIDE_CORPORA:-anthropics-skills scientific-skills test/testdata/openai-lookalike test/testdata/microsoft-lookalike}"
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
# corpus_dir NAME: the folder of corpus NAME.
corpus_dir() {
	if [[ -d "$shared/corpora/$1" ]]; then
		echo "$shared/corpora/$1"
	else
		echo "$root/$1"
	fi
}
for c in $corpora; do
	[[ -d "$(corpus_dir "$c")" ]] || die "corpus $c is missing: neither $shared/corpora/$c nor $root/$c"
done

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

# expect CORPUS COUNTS: a skill is a folder up to three levels below CORPUS
# (skills/.curated/x in OpenAI's layout) whose SKILL.md has a `name:` line in
# its frontmatter; version-control and tool folders are not searched (a
# SKILL.md without frontmatter inside a skill is one of its files). Its files
# are the regular files below it, less hidden ones and node_modules, which
# the server never serves. Writes "NAME FILES" a line to COUNTS and sets
# corpus_skills and corpus_files.
expect() {
	local corpus="$1" counts="$2" md name n
	: >"$counts"
	corpus_skills=0
	corpus_files=0
	while IFS= read -r md; do
		[[ -f "$md" ]] || continue
		name="$(awk '
			NR == 1 && /^---[ \t\r]*$/ { fm = 1; next }
			fm && /^---[ \t\r]*$/ { exit }
			fm && /^name:/ { sub(/^name:[ \t]*/, ""); gsub(/["\047\r]/, ""); sub(/[ \t]+$/, ""); print; exit }
		' "$md")"
		[[ -n "$name" ]] || continue
		n="$(cd "$(dirname "$md")" && find . -type f ! -path '*/.*' ! -path '*/node_modules/*' | wc -l | tr -d ' ')"
		echo "$name $n" >>"$counts"
		corpus_skills=$((corpus_skills + 1))
		corpus_files=$((corpus_files + n))
	done < <(find "$corpus" -mindepth 2 -maxdepth 4 \( -name .git -o -name .github -o -name node_modules \) -prune -o -name SKILL.md -type f -print | sort)
	[[ "$corpus_skills" -gt 0 ]] || die "no SKILL.md with a name: line below $corpus"
}

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

# No scenario is excluded: a skill whose skills/list entry a strict client
# would reject (a description over 1,024 characters, typed metadata, a name
# breaking the rules) is left out of skills/list with one warning and served
# through tools, prompts and resources (issue 13 item 4); check.mjs reads
# those warnings from the server's stderr.

# The server gets a scratch HOME, so no ~/.skilljack/config.json changes what
# it serves.
mkdir -p "$work/home"

eras="${OUTSIDE_ERAS:-legacy modern}"
summaries=()
for cname in $corpora; do
	corpus="$(corpus_dir "$cname")"
	cname="$(basename "$cname")"
	counts="$work/$cname-counts.txt"
	expect "$corpus" "$counts"
	# The server's skill path for a local root is <root folder name>/<container folders>/<skill folder>.
	prefix="$(basename "$corpus")"
	echo
	echo "corpus: $corpus"
	echo "corpus: $corpus_skills skills, $corpus_files files"
	summaries+=("$cname: $corpus_skills skills ($corpus_files files) in the corpus")
	for era in $eras; do
		section "outside: $cname, inspector over stdio, protocol era $era"
		o="$work/$cname-$era"

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
		msg="$(check skills "$o-skills.json" "$prefix" "$counts" "$o-skills.json.stderr")" ||
			fail_with "$o-skills.json" "[$era] $msg"
		pass "[$era] $msg"

		rc=0
		inspect "$o-verify.ndjson" --protocol-era "$era" \
			--method skills/list --verify --require-digests || rc=$?
		msg="$(check verify "$o-verify.ndjson" "$prefix" "$counts" "$o-verify.ndjson.stderr")" ||
			fail_with "$o-verify.ndjson" "[$era] skills/list --verify (inspector exit $rc): $msg"
		[[ $rc -eq 0 ]] ||
			fail_with "$o-verify.ndjson" "[$era] skills/list --verify: inspector exited $rc although check.mjs accepted its reports"
		pass "[$era] $msg"
		summary="$(grep -v '^{' "$o-verify.ndjson.stderr" | grep -E 'skills? (failed|and|verified)' | tail -n 1 || true)"
		echo "     inspector's own summary: $summary"
	done
done

section "outside: summary"
printf '%s\n' "${summaries[@]}"
echo "outside: $passed passed, 0 failed"
