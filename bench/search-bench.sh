#!/usr/bin/env bash
# Search relevance on the search-bench development set, through a real server,
# in one command (see bench/search_bench.py):
#
#   bench/search-bench.sh                      # nDCG@10 / Recall@10, live and non-live
#   bench/search-bench.sh --out bench/results/search-bench.json
#
# Builds the server (debug: the ranking does not depend on the profile), then
# publishes the set's 2,101 tools into a fresh SQLite + files registry and sends
# its 2,501 requests as written. Needs python3 and the set beside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "==> building toolreg-server" >&2
cargo build -q -p toolreg-server >&2
exec python3 bench/search_bench.py "$@"
