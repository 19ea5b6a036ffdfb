#!/bin/sh
# The definition lint on real and generated tool definitions: how many
# poisoned ones it catches (goal: all 20 of the lint benchmark's set) and
# how many ordinary ones it blocks or flags (goals: none blocked; at most 1
# of the benchmark's 597 ordinary definitions flagged, at most 1 in 30 of
# the corpus and of 240 generated ordinary tools).
#
# Each definition is linted alone, as `toolreg validate` does; with
# --siblings the definitions of one source server are each other's
# siblings, as the registry knows them at publish. Counts, not times: the
# test profile is enough (speed is the criterion bench,
# `cargo bench -p toolreg-core --bench lint`).
#
#   bench/lint-bench.sh                 # the table, and every flagged or missed definition
#   bench/lint-bench.sh --verbose       # every finding of every set
#   bench/lint-bench.sh --markdown      # the table for bench/README.md
#   bench/lint-bench.sh --data DIR      # also files in the benchmark's format under DIR
set -eu
cd "$(dirname "$0")/.."
exec cargo run -q -p toolreg-core --example lint_bench -- "$@"
