#!/bin/sh
# Proof generation at 1,000,000 transparency-log records (goal: ≤ 1 ms per proof).
#
# Fills a real SQLite database (and PostgreSQL with TOOLREG_BENCH_PG=1) with
# the stored subtree hashes of a 1,000,000-leaf tree, computed by the core
# functions, then times inclusion proofs, consistency proofs and checkpoint
# roots the way the server's endpoints generate them. Prints mean/p50/p99.
#
#   bench/tlog.sh                      # test profile (what CI builds)
#   PROFILE=release bench/tlog.sh      # optimized build
#   TOOLREG_BENCH_LEAVES=100000 bench/tlog.sh
set -eu
cd "$(dirname "$0")/.."
if [ "${PROFILE:-}" = "release" ]; then
    set -- --release
fi
exec cargo test "$@" -p toolreg-server --test log_bench -- --ignored --nocapture
