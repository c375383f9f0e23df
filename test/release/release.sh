#!/usr/bin/env bash
# Release build (issue 15): cross-compiled binaries, the .mcpb bundle (staged
# in <out>/bundle) and SHA256SUMS, written into dist/ or the folder given.
# Reproducible: running it twice gives the same SHA256SUMS. Cross-builds are
# cached in GOCACHE, so a second run only links.
#
#   test/release/release.sh [out]
set -euo pipefail
root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
cd "$root"
exec go run ./test/release -out "${1:-dist}"
