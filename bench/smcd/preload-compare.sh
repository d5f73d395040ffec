#!/usr/bin/env bash
# bash bench/smcd/preload-compare.sh [--wall] [--c] [--rounds N] [--dur S]: runs bench/smcd/preload-compare.cjs
# in the SMC-D guest (smc-run against an LD_PRELOAD socket() interposer, both ends SMC-D; results in
# bench/results/preload-compare.json), or with --c bench/smcd/preload-lib-compare.cjs (a C program under
# the launcher's LD_PRELOAD library against the same interposer, with an A/A pair; results in
# bench/results/preload-lib-compare.json). Virtual time unless --wall (see bench/smcd/in-guest.sh).
# Run it under `flock /tmp/smc-run-guest.lock`.
set -euo pipefail
here=$(dirname "$0")
wall=()
if [ "${1:-}" = --wall ]; then wall=(--wall); shift; fi
script=bench/smcd/preload-compare.cjs
if [ "${1:-}" = --c ]; then shift; script=bench/smcd/preload-lib-compare.cjs; fi
exec bash "$here/in-guest.sh" "${wall[@]}" "$script" "$@"
