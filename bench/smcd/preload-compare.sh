#!/usr/bin/env bash
# bash bench/smcd/preload-compare.sh [--wall] [--c] [--rounds N] [--dur S]: boots the SMC-D guest and runs
# bench/smcd/preload-compare.cjs in it (smc-run against an LD_PRELOAD socket() interposer, both ends
# SMC-D; results in bench/results/preload-compare.json), or with --c bench/smcd/preload-lib-compare.cjs
# (a C program under the launcher's LD_PRELOAD library against the same interposer, with an A/A pair;
# results in bench/results/preload-lib-compare.json). The guest runs under qemu's instruction counting
# (SMC_RUN_ACCEL=icount: guest clocks count executed instructions, so host load does not move the
# figures); --wall boots it as the functional lanes do (multi-threaded TCG, wall clock).
# Run it under `flock /tmp/smc-run-guest.lock`.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/test/vm/lib.sh"
cd "$REPO"
[ -e build/Release/smc_run.node ] || npx node-gyp rebuild >/dev/null
npm run -s build:ts
mkdir -p build/bench
cc -O2 -Wall -Wextra -shared -fPIC -o build/bench/socket-preload.so bench/c/socket-preload.c -ldl
script=bench/smcd/preload-compare.cjs
clock=icount
if [ "${1:-}" = --wall ]; then shift; clock=wall; fi
if [ "${1:-}" = --c ]; then
  shift; script=bench/smcd/preload-lib-compare.cjs
  cc -O2 -Wall -Wextra -o build/bench/smc-bench bench/c/smc-bench.c
  sh scripts/build-preload.sh build/Release/smc-preload.so   # rebuilds only when stale
fi
RUN=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-preload-compare.XXXXXX")
{ echo "export SMC_RUN_BENCH_CLOCK=$clock"; printf 'exec node %s' "$script"; [ $# = 0 ] || printf ' %q' "$@"; echo; } > "$RUN/bench-job.sh"
rc=0
[ $clock = wall ] || export SMC_RUN_ACCEL=icount
bash test/vm/smcd/boot.sh --timeout 1800 --cpus 2 "$RUN/bench-job.sh" "$RUN" || rc=$?
log "guest finished rc=$rc"
[ $rc != 0 ] || rm -rf "$RUN"
exit $rc
