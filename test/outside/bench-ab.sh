#!/usr/bin/env bash
# Go benchmarks of two commits side by side (issue 12: "numbers before and
# after"): test binaries of BASE and of the working tree, run alternately
# ROUNDS times with -benchmem, then benchstat. The 10k rows use
# .tools/corpora/gen-10000 (made by bench-compare.sh or test/gencorpus).
#
#   test/outside/bench-ab.sh BASE [ROUNDS]
set -euo pipefail
root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
cd "$root"
base=${1:?usage: bench-ab.sh BASE [ROUNDS]}
rounds=${2:-3}
out="$root/.tools/bench-ab"
basewt="$out/base"
rm -rf "$out/bin" && mkdir -p "$out/bin"
git worktree remove --force "$basewt" 2>/dev/null || true
git worktree add -f --detach "$basewt" "$base" >/dev/null
# Tests that read ../shared find it beside the base checkout too.
[[ -e "$out/shared" || ! -d "$root/../shared" ]] || ln -s "$root/../shared" "$out/shared"
# The generated corpora are shared too, not generated again for the base.
if [[ -d "$root/.tools/corpora" ]]; then
	mkdir -p "$basewt/.tools"
	ln -s "$root/.tools/corpora" "$basewt/.tools/corpora"
fi
pkgs=(mcpface test actors/hasher actors/catalog)
for v in base head; do
	src="$root"
	[[ $v == base ]] && src="$basewt"
	for p in "${pkgs[@]}"; do
		(cd "$src" && go test -c -o "$out/bin/$v.${p//\//_}.test" "./$p")
	done
done
corpus="$root/.tools/corpora/gen-10000"
run() { # version package pattern benchtime [env]
	local v=$1 p=$2 b=$3 t=$4 dir
	shift 4
	dir="$root/$p"
	[[ $v == base ]] && dir="$basewt/$p"
	(cd "$dir" && env "$@" "$out/bin/$v.${p//\//_}.test" -test.run '^$' -test.bench "$b" -test.benchmem -test.benchtime "$t" 2>/dev/null |
		grep -E '^Benchmark' >>"$out/$v.txt") || true
}
rm -f "$out/base.txt" "$out/head.txt"
for r in $(seq "$rounds"); do
	for v in base head; do
		echo "[$(date +%T)] round $r/$rounds $v" >&2
		run $v mcpface 'SkillsGet$|ResourcesRead$|SkillsListPage$' 200x X=1
		run $v test 'StartupToFirstCatalog|SkillsListWalk|EditToNotification$' 10x X=1
		[[ -d $corpus ]] && run $v test 'EditToNotificationLarge' 10x SKILLJACK_BENCH_CORPUS="$corpus"
		[[ -d $corpus ]] && run $v test 'StartupLarge/cold' 3x SKILLJACK_BENCH_CORPUS="$corpus"
		run $v actors/catalog 'BuilderEdit' 20x X=1
		run $v actors/hasher 'ScanCorpus' 3x X=1
		run $v actors/hasher 'OneFileChange' 20x X=1
	done
done
git worktree remove --force "$basewt"
go run golang.org/x/perf/cmd/benchstat@latest "$out/base.txt" "$out/head.txt"
