#!/usr/bin/env bash
# Conformance check: run the pinned MCP conformance suite
# (@modelcontextprotocol/conformance) against the built skilljack-mcp binary
# serving the stateless Streamable HTTP transport (--http=0) on the fixture
# corpus test/outside/fixtures/conformance-skills, once per protocol version.
# See test/outside/README.md. Tools go into the git-ignored .tools/ folder and
# are reused on the next run when they are already at the pinned versions.
#
#   CONFORMANCE_VERSIONS="2025-11-25" test/outside/conformance.sh   # one version
#   CONFORMANCE_SCENARIOS="ping tools-list" test/outside/conformance.sh
#   CONFORMANCE_BIN=/path/to/skilljack-mcp test/outside/conformance.sh  # no build
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

# Pinned versions. The suite's exact tree is pinned by
# conformance/package-lock.json beside this script; change both together.
# Node matches run.sh's so that both scripts share .tools/node22.
node_major=22
node_min_minor=19
suite_version=0.2.0-alpha.12

fixture="$here/fixtures/conformance-skills"
tools="$root/.tools"
bin="$tools/bin/skilljack-mcp"
work="$tools/conformance-run"

# Protocol versions, each run on its own wire: 2026-07-28 is the stateless
# server/discover era (the suite's default for new scenarios), 2025-11-25 the
# classic initialize handshake.
versions="${CONFORMANCE_VERSIONS:-2026-07-28 2025-11-25}"

# Allowed failures: SCENARIO:CHECK-ID (or a bare SCENARIO, for all of its
# checks), then the reason; lines starting with # are comments. Such a check
# may fail; any other failing check, the suite's wire-schema-valid check
# included, fails the run. README.md groups and explains them. An entry whose
# scenario passed is printed as a NOTE so it can be dropped.
excluded_table="$(
	cat <<'EOF'
# The suite's reference ("everything") server: tools, prompts and resources
# named test_* and test://* that a skills server does not have.
tools-call-simple-text:tools-call-simple-text fixture: calls the suite's reference tool test_simple_text; this server serves only skills
tools-call-image:tools-call-image fixture: calls the suite's reference tool test_image_content; this server serves only skills
tools-call-audio:tools-call-audio fixture: calls the suite's reference tool test_audio_content; this server serves only skills
tools-call-embedded-resource:tools-call-embedded-resource fixture: calls the suite's reference tool test_embedded_resource; this server serves only skills
tools-call-mixed-content:tools-call-mixed-content fixture: calls the suite's reference tool test_multiple_content_types; this server serves only skills
tools-call-error:tools-call-error fixture: calls the suite's reference tool test_error_handling; this server serves only skills
tools-call-with-progress:tools-call-with-progress fixture: calls the suite's reference tool test_tool_with_progress; this server serves only skills
tools-call-with-logging:tools-call-with-logging fixture: calls the suite's reference tool test_tool_with_logging; this server serves only skills
json-schema-2020-12:json-schema-2020-12-tool-found fixture: calls the suite's reference tool json_schema_2020_12_tool; this server serves only skills
prompts-get-simple:prompts-get-simple fixture: calls the suite's reference prompt test_simple_prompt; this server serves only skills
prompts-get-with-args:prompts-get-with-args fixture: calls the suite's reference prompt test_prompt_with_arguments; this server serves only skills
prompts-get-embedded-resource:prompts-get-embedded-resource fixture: calls the suite's reference prompt test_prompt_with_embedded_resource; this server serves only skills
prompts-get-with-image:prompts-get-with-image fixture: calls the suite's reference prompt test_prompt_with_image; this server serves only skills
resources-read-text:resources-read-text fixture: calls the suite's reference resource test://static-text; this server serves only skills
resources-read-binary:resources-read-binary fixture: calls the suite's reference resource test://static-binary; this server serves only skills
resources-templates-read:resources-templates-read fixture: calls the suite's reference template test://template/{id}/data; this server serves only skills
# Features this server does not have by design.
completion-complete:completion-complete fixture: completes an argument of the suite's reference prompt test_prompt_with_arguments; this server completes only its own prompt skill (name) and its skill://{+path} template
tools-call-sampling:tools-call-sampling no sampling: the server never sends sampling/createMessage (reference tool test_sampling)
tools-call-elicitation:tools-call-elicitation no elicitation: the server never sends elicitation/create (reference tool test_elicitation)
elicitation-sep1034-defaults:elicitation-sep1034-general no elicitation (reference tool test_elicitation_sep1034_defaults)
elicitation-sep1330-enums:elicitation-sep1330-general no elicitation (reference tool test_elicitation_sep1330_enums)
resources-subscribe:resources-subscribe stateless HTTP: no sessions, so resources.subscribe is false and resources/subscribe is method-not-found (stdio has it)
resources-unsubscribe:resources-unsubscribe stateless HTTP: no subscriptions to end (its setup calls resources/subscribe)
input-required-result-basic-elicitation:sep-2322-elicitation-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-basic-sampling:sep-2322-sampling-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-basic-list-roots:sep-2322-list-roots-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-request-state:sep-2322-request-state-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-multiple-input-requests:sep-2322-multiple-inputs-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-multi-round:sep-2322-multi-round-r1 no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-non-tool-request:sep-2322-non-tool-incomplete no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-result-type:sep-2322-result-type-included no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-tampered-state:sep-2322-reject-tampered-state no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
input-required-result-capability-check:sep-2322-respect-client-capabilities no input requests: the server never returns an InputRequiredResult (SEP-2322); the scenario calls a reference test_input_required_result_* tool or prompt
server-stateless:sep-2575-server-rejects-undeclared-capability untestable here: needs the reference tool test_missing_capability; no request of this server needs a client capability
server-stateless:sep-2575-missing-capability-http-400 untestable here: needs the reference tool test_missing_capability
server-stateless:sep-2575-http-server-no-independent-requests-on-stream untestable here: needs the reference tool test_streaming_elicitation; the server sends no requests to the client
server-stateless:sep-2575-server-no-log-without-loglevel untestable here: needs the reference tool test_logging_tool; the server sends no log notifications
http-custom-header-server-validation:sep-2243-server-no-xmcp-tool untestable here: no tool of this server has x-mcp-header parameters (SEP-2243), so there is no custom header to validate
http-custom-header-server-validation:sep-2243-server-decode-base64 untestable here: no tool of this server has x-mcp-header parameters (SEP-2243), so there is no custom header to validate
http-custom-header-server-validation:sep-2243-server-validate-param-match untestable here: no tool of this server has x-mcp-header parameters (SEP-2243), so there is no custom header to validate
http-custom-header-server-validation:sep-2243-server-reject-invalid-param-chars untestable here: no tool of this server has x-mcp-header parameters (SEP-2243), so there is no custom header to validate
http-custom-header-server-validation:sep-2243-server-reject-param-mismatch untestable here: no tool of this server has x-mcp-header parameters (SEP-2243), so there is no custom header to validate
EOF
)"

section() { printf '\n=== %s ===\n' "$*"; }
die() {
	echo "FAIL $*" >&2
	echo "conformance: 0 passed, 1 failed"
	exit 1
}

[[ -d "$fixture" ]] || die "fixture $fixture is missing"
start_all=$SECONDS

# --- tools ---------------------------------------------------------------------

section "conformance: tools (cached in .tools/)"
mkdir -p "$tools/bin" "$work"

# shellcheck source=node.sh
source "$here/node.sh"
ensure_node

suite_dir="$tools/conformance"
suite="$suite_dir/node_modules/.bin/conformance"
ensure_npm_tree @modelcontextprotocol/conformance "$suite_version" "$here/conformance" "$suite_dir" ci
[[ -x "$suite" ]] || die "no $suite after the install"

section "conformance: build"
if [[ -n "${CONFORMANCE_BIN:-}" ]]; then
	bin="$CONFORMANCE_BIN"
	echo "using CONFORMANCE_BIN=$bin (no build)"
else
	rm -f "$bin"
	go build -o "$bin" . || die "go build -o $bin ."
	echo "built $bin"
fi

# --- server --------------------------------------------------------------------

section "conformance: server"
rm -rf "$work"
mkdir -p "$work/home"
server_log="$work/server.stderr"
server_pid=""
stop_server() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
	fi
	[[ -z "$server_pid" ]] || wait "$server_pid" 2>/dev/null || true
	server_pid=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

# A scratch HOME, so no ~/.skilljack/config.json changes what it serves; stdin
# from /dev/null, which must not stop an HTTP server. Port 0: the kernel picks
# a free one and the server logs it.
echo "\$ HOME=.tools/conformance-run/home ${bin#"$root/"} --http=0 ${fixture#"$root/"}"
HOME="$work/home" "$bin" --http=0 "$fixture" </dev/null >"$work/server.stdout" 2>"$server_log" &
server_pid=$!

url=""
for _ in $(seq 300); do # 30 s
	url="$(grep -m1 'listening' "$server_log" | grep -o 'url=http://127\.0\.0\.1:[0-9]*/mcp' | head -n1 || true)"
	[[ -z "$url" ]] || break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if [[ -z "$url" ]]; then
	why="within 30 s"
	if ! kill -0 "$server_pid" 2>/dev/null; then
		rc=0
		wait "$server_pid" 2>/dev/null || rc=$?
		server_pid=""
		why="before it exited with status $rc"
	fi
	echo "--- server stderr (last 40 lines of $server_log):" >&2
	tail -n 40 "$server_log" >&2
	die "the server did not log 'listening ... url=http://127.0.0.1:PORT/mcp' $why"
fi
url="${url#url=}"
echo "server: pid $server_pid, $url"

# --- suite -----------------------------------------------------------------------

# Scenario names from `conformance list`, one per line.
list_names() { "$suite" list --server "$@" | sed -n 's/^  - \([^ ]*\).*/\1/p'; }
all_names="$(list_names)"
[[ -n "$all_names" ]] || die "conformance list --server printed no scenario"
skills_names="$(grep '^sep-2640-skills-' <<<"$all_names" || true)"
[[ -n "$skills_names" ]] || die "conformance list --server has no sep-2640-skills-* scenario"

# summarize CHECKS_JSON: prints
#   passed failed warnings skipped <failing check ids, comma-separated, or ->
# then one line per failed or warning check with its message. INFO checks
# (the suite's request/response log) are not counted.
summarize() {
	node -e '
		const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const n = (s) => checks.filter((c) => c.status === s).length;
		const failing = checks.filter((c) => c.status === "FAILURE");
		console.log([n("SUCCESS"), n("FAILURE"), n("WARNING"), n("SKIPPED"),
			failing.map((c) => c.id).join(",") || "-"].join(" "));
		for (const c of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")) {
			const msg = String(c.errorMessage ?? c.description ?? "").replace(/\s+/g, " ");
			console.log(`       ${c.status === "FAILURE" ? "failed " : "warning"} ${c.id}: ${msg.length > 400 ? msg.slice(0, 400) + "…" : msg}`);
		}
	' "$1"
}

# reason_for SCENARIO CHECKID: the exclusion reason, empty if not excluded.
reason_for() {
	awk -v s="$1" -v c="$1:$2" '
		/^#/ { next }
		$1 == s || $1 == c { $1 = ""; sub(/^ +/, ""); print; exit }
	' <<<"$excluded_table"
}

passed=0 failed=0 allowed=0
failures=""
for v in $versions; do
	section "conformance: protocol $v"
	vstart=$SECONDS
	if [[ -n "${CONFORMANCE_SCENARIOS:-}" ]]; then
		names="$(tr ' ' '\n' <<<"$CONFORMANCE_SCENARIOS" | grep -v '^$')"
	else
		names="$(
			list_names --spec-version "$v"
			echo "$skills_names"
		)"
		names="$(awk '!seen[$0]++' <<<"$names")"
	fi
	if [[ -n "${CONFORMANCE_SCENARIOS:-}" ]]; then
		echo "$(wc -l <<<"$names" | tr -d ' ') scenarios from CONFORMANCE_SCENARIOS"
	else
		echo "$(wc -l <<<"$names" | tr -d ' ') scenarios: those listed for $v plus the sep-2640-skills-* extension scenarios"
	fi
	echo "\$ conformance server --url $url --scenario SCENARIO --spec-version $v --force -o .tools/conformance-run/$v/SCENARIO"
	for s in $names; do
		out="$work/$v/$s"
		mkdir -p "$out"
		rc=0
		timeout 120 "$suite" server --url "$url" --scenario "$s" --spec-version "$v" --force \
			--timeout 30000 -o "$out" >"$out/stdout.txt" 2>"$out/stderr.txt" </dev/null || rc=$?
		checks="$(find "$out" -name checks.json | head -n1)"
		if [[ -z "$checks" ]]; then
			line="0 1 0 0 scenario-did-not-run"
			detail="       failed scenario-did-not-run: conformance exited $rc without a checks.json; $(tail -n 3 "$out/stderr.txt" "$out/stdout.txt" | tr '\n' ' ' | cut -c1-400)"
		else
			summary="$(summarize "$checks")"
			line="$(head -n1 <<<"$summary")"
			detail="$(tail -n +2 <<<"$summary")"
		fi
		read -r np nf nw ns ids <<<"$line"
		counts="$np passed, $nf failed, $nw warnings, $ns skipped"
		if [[ $nf -eq 0 && $rc -eq 0 ]]; then
			passed=$((passed + 1))
			if [[ $np -eq 0 ]]; then
				echo "ok    [$v] $s: $counts (nothing applicable to this server: no check passed or failed)"
			else
				echo "ok    [$v] $s: $counts"
			fi
			[[ -z "$detail" ]] || echo "$detail"
			for e in $(awk -v s="$s" '$1 == s || index($1, s ":") == 1 { print $1 }' <<<"$excluded_table"); do
				echo "NOTE  [$v] $e is excluded but passed; drop it if it passes on every version"
			done
			continue
		fi
		# Every failing check must be excused, by the scenario or by its check.
		reasons="" unexcused=""
		[[ $nf -gt 0 ]] || unexcused="conformance exited $rc with no failed check"
		for id in ${ids//,/ }; do
			[[ $nf -gt 0 ]] || break
			r="$(reason_for "$s" "$id")"
			if [[ -n "$r" ]]; then
				reasons+="       excused $id: $r"$'\n'
			else
				unexcused+=" $id"
			fi
		done
		if [[ -z "$unexcused" ]]; then
			allowed=$((allowed + 1))
			echo "xfail [$v] $s: $counts; every failed check is excluded:"
			printf '%s' "$reasons"
		else
			failed=$((failed + 1))
			failures+="  [$v] $s:$unexcused"$'\n'
			echo "FAIL  [$v] $s: $counts; not excluded:$unexcused"
			echo "$detail"
			echo "       results: ${checks:-$out} (stdout.txt beside it)"
		fi
	done
	kill -0 "$server_pid" 2>/dev/null || {
		echo "--- server stderr (last 40 lines of $server_log):" >&2
		tail -n 40 "$server_log" >&2
		die "the server exited during the $v run"
	}
	echo "protocol $v: done in $((SECONDS - vstart))s"
done

section "conformance: summary"
stop_server
echo "server: ${bin#"$root/"} --http=0 ${fixture#"$root/"}; suite @modelcontextprotocol/conformance@$suite_version; protocol versions: $versions"
echo "scenario runs: $passed passed, $failed failed, $allowed excluded (allowed failures, see README.md); $((SECONDS - start_all))s"
if [[ $failed -gt 0 ]]; then
	echo "failing scenario runs (results in .tools/conformance-run/VERSION/SCENARIO/):"
	printf '%s' "$failures"
fi
echo "conformance: $passed passed, $failed failed, $allowed skipped"
[[ $failed -eq 0 ]]
