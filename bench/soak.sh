#!/usr/bin/env bash
# Soak: two toolreg-server replicas on one PostgreSQL database and one S3
# server (moto) under a bounded mixed load of publishers, searchers and
# downloaders; passes with 0 errors and flat memory (RSS printed over time).
#
#   bench/soak.sh               # 2 minutes
#   bench/soak.sh --minutes 10  # at most 10
#
# Needs PostgreSQL on 127.0.0.1:5432 (trust auth, user postgres), createdb/dropdb
# and moto_server. Builds the release binary first. Part of the benchmark
# suite, not of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in python3 moto_server createdb dropdb; do
  command -v "$tool" >/dev/null || { echo "bench/soak.sh: missing $tool" >&2; exit 2; }
done
echo "==> building toolreg-server (release)" >&2
cargo build --release -p toolreg-server >&2
exec python3 bench/soak.py "$@"
