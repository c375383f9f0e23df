#!/usr/bin/env bash
# Side-by-side benchmark (issue 12): our binary against the reference server,
# the official TypeScript SDK v2 ext/skills loader
# (@modelcontextprotocol/server 2.4.0 + @modelcontextprotocol/node 2.1.2 under
# Node 22, pinned by bench/package-lock.json), on the same folders, with one
# raw JSON-RPC-over-stdio client for both (test/benchcompare). Alternates the
# servers round by round and prints one table per corpus on stdout (also kept
# in .tools/bench/). See test/outside/README.md, "Benchmark against the
# reference". Not part of CI.
#
#   test/outside/bench-compare.sh                      # scientific-skills (5 rounds) and 10,000 generated skills (3 rounds)
#   QUICK=1 test/outside/bench-compare.sh              # smoke run: 1 round, 1,000 generated skills, 5 edits
#   CORPORA=10k ROUNDS=5 EDITS=20 test/outside/bench-compare.sh
#   KEEP_AWAKE=1 test/outside/bench-compare.sh        # with one SCHED_IDLE spinner per CPU (see below)
#
# KEEP_AWAKE=1 runs one busy loop per CPU under the SCHED_IDLE policy
# (chrt --idle): it takes only CPU time nothing else wants, so neither
# server loses any, but the CPUs never go idle. On a virtual machine whose
# idle vCPUs are descheduled (and whose balloon hands freed pages back to
# the host) every wake-up and every page touched after a pause costs tens
# of microseconds; this measures both servers without that (as a host
# with idle=poll would), next to the default run that includes it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
cd "$root"

# Pinned versions: the reference's exact tree is pinned by bench/package.json
# and bench/package-lock.json; change them together. Node matches run.sh's so
# that the scripts share .tools/node22.
node_major=22
node_min_minor=19
server_version=2.4.0

tools="$root/.tools"
bin="$tools/bin/skilljack-mcp"
client="$tools/bin/benchcompare"
ref_dir="$tools/bench-reference"
work="$tools/bench"
shared="$root/../shared"

quick="${QUICK:-0}"
keep_awake="${KEEP_AWAKE:-0}"
corpora="${CORPORA:-scientific,10k}"
gen_skills=10000
[[ "$quick" == 1 ]] && gen_skills=1000

die() {
	echo "bench-compare: FAIL $*" >&2
	exit 1
}
section() { printf '\n=== %s ===\n' "$*" >&2; }

section "bench-compare: tools (cached in .tools/)"
mkdir -p "$tools/bin" "$work"
# shellcheck source=node.sh
source "$here/node.sh"
ensure_node >&2
ensure_npm_tree @modelcontextprotocol/server "$server_version" "$here/bench" "$ref_dir" ci >&2
# Beside its node_modules, so that its imports resolve.
cp "$here/bench/reference-server.mjs" "$ref_dir/reference-server.mjs"
node_bin="$(command -v node)"

section "bench-compare: build"
CGO_ENABLED=0 go build -o "$bin" . || die "go build -o $bin ."
go build -o "$client" ./test/benchcompare || die "go build -o $client ./test/benchcompare"
echo "built $bin ($(git describe --always --dirty)) and $client" >&2

spinners=()
stop_spinners() { [[ ${#spinners[@]} -eq 0 ]] || kill "${spinners[@]}" 2>/dev/null || true; }
trap stop_spinners EXIT
if [[ "$keep_awake" == 1 ]]; then
	command -v chrt >/dev/null || die "KEEP_AWAKE=1 needs chrt (util-linux)"
	for _ in $(seq "$(nproc)"); do
		chrt --idle 0 bash -c 'while :; do :; done' &
		spinners+=($!)
	done
fi

out="$work/bench-compare-$(date +%Y%m%d-%H%M%S).txt"
{
	echo "bench-compare $(date -u +%Y-%m-%dT%H:%M:%SZ), checkout $(git describe --always --dirty), $(nproc) CPUs$([[ "$quick" == 1 ]] && echo ", QUICK")$([[ "$keep_awake" == 1 ]] && echo ", KEEP_AWAKE (one SCHED_IDLE spinner per CPU)")"
} | tee "$out"

# bench LABEL DIR ROUNDS EDITS: one corpus, both servers; our server gets a
# fresh HOME for it, kept over its rounds (the warm-cache starts).
bench() {
	local label=$1 dir=$2 rounds=$3 edits=$4
	section "bench-compare: $label ($rounds rounds)"
	rm -rf "$work/home-$label" "$work/home-$label-"*
	"$client" -corpus "$dir" -label "$label" -rounds "$rounds" -edits "$edits" \
		-ours "$bin" -ours-home "$work/home-$label" -logs "$work/logs-$label" \
		-ref-cmd "$node_bin $ref_dir/reference-server.mjs" | tee -a "$out"
}

IFS=, read -ra wanted <<<"$corpora"
for c in "${wanted[@]}"; do
	case "$c" in
	scientific)
		src="$shared/corpora/scientific-skills"
		if [[ ! -d "$src" ]]; then
			echo "bench-compare: SKIP scientific: $src is missing (../shared is only in the workplace checkout)" | tee -a "$out"
			continue
		fi
		# A private copy: the edit rows change (and restore) one file in it.
		dst="$tools/corpora/scientific-skills"
		rm -rf "$dst"
		mkdir -p "$tools/corpora"
		cp -a "$src" "$dst"
		if [[ "$quick" == 1 ]]; then r=1 e=5; else r=5 e=20; fi
		bench scientific-skills "$dst" "${ROUNDS:-$r}" "${EDITS:-$e}"
		;;
	10k)
		dst="$tools/corpora/gen-$gen_skills"
		section "bench-compare: corpus $dst"
		go run ./test/gencorpus -skills "$gen_skills" -files 4 -out "$dst" >&2 || die "go run ./test/gencorpus"
		if [[ "$quick" == 1 ]]; then r=1 e=5; else r=3 e=10; fi
		bench "gen-$gen_skills" "$dst" "${ROUNDS:-$r}" "${EDITS:-$e}"
		;;
	*) die "unknown corpus '$c' in CORPORA (scientific, 10k)" ;;
	esac
done
echo >&2
echo "bench-compare: the tables are also in $out" >&2
