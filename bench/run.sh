#!/usr/bin/env bash
# The toolreg benchmark suite in one command, on loopback only:
#
#   bench/run.sh            # full: 1,000 and 100,000 tools, SQLite+files and PostgreSQL+S3 (Garage), + nginx
#   bench/run.sh --quick    # 1,000 tools only
#   bench/run.sh --quick --backends sqlite --duration 5     # any bench.py option passes through
#   bench/run.sh --check    # and print each goal as met or MISSED (exit 1 if one is missed)
#
# Needs: wrk, nginx (Debian: apt-get install -y wrk nginx), python3, PostgreSQL
# on 127.0.0.1:5432 (trust auth, user postgres) and, for the PostgreSQL+S3
# rows, Garage (`cargo install garage --locked --root DIR`, then GARAGE_BIN=DIR/bin/garage
# or garage on PATH) or, with --s3 moto, moto_server (pip install "moto[server]").
# Builds the release binary first.
# Prints a Markdown table and writes it to bench/results/latest.md (+ .json).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
args=()
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    --full) mode=full ;;
    -h|--help) sed -n '2,14p' "$0"; exec python3 bench/bench.py --help ;;
    *) args+=("$arg") ;;
  esac
done

missing=()
for tool in wrk nginx python3; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [[ " ${args[*]:-} " != *" --backends sqlite "* ]]; then
  for tool in createdb dropdb; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  if [[ " ${args[*]:-} " == *" --s3 moto "* ]]; then
    command -v moto_server >/dev/null || missing+=(moto_server)
  else
    command -v "${GARAGE_BIN:-garage}" >/dev/null || missing+=("garage (or GARAGE_BIN)")
  fi
fi
if ((${#missing[@]})); then
  echo "bench/run.sh: missing ${missing[*]} (apt-get install -y wrk nginx postgresql-client;" \
    "cargo install garage --locked --root DIR, or pip install 'moto[server]' for --s3 moto)" >&2
  exit 2
fi

echo "==> building toolreg-server (release)" >&2
# The server and the CLI together, as a release build of both is usually
# made: cargo unifies dependency features over the packages it builds, so
# the server alone would rebuild most dependencies with another feature set.
cargo build --release -p toolreg-server -p toolreg >&2

exec python3 bench/bench.py --mode "$mode" ${args[@]+"${args[@]}"}
