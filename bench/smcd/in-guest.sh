#!/usr/bin/env bash
# bash bench/smcd/in-guest.sh [--wall] [--newest] [--timeout S] SCRIPT [ARGS...]: builds what the guest benches use
# on the host (the addon if missing, dist/, the bare socket() interposer, the C bench, the LD_PRELOAD
# library), boots the SMC-D guest once and runs `node SCRIPT ARGS` in it. The guest runs under qemu's
# instruction counting (SMC_RUN_ACCEL=icount: guest clocks count executed instructions, so host load does
# not move the figures); --wall boots it as the functional lanes do (multi-threaded TCG, wall clock).
# --newest boots lane smcd-newest's kernel (7.x with BTF: the BPF switch) instead of 6.12.
# Run it under `flock /tmp/smc-run-guest.lock`.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/test/vm/lib.sh"
cd "$REPO"
clock=icount TIMEOUT=1800 kernel=()
while [ $# -gt 0 ]; do
  case $1 in
    --wall) clock=wall; shift ;;
    # shellcheck disable=SC2086
    --newest) kernel=(--kernel "$(bash test/vm/smcd/build-kernel.sh ${LANE_KERNEL[smcd-newest]})"); shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || die "usage: bench/smcd/in-guest.sh [--wall] [--newest] [--timeout S] SCRIPT [ARGS...]"
[ -e build/Release/smc_run.node ] || npx node-gyp rebuild >/dev/null
npm run -s build:ts
mkdir -p build/bench
cc -O2 -Wall -Wextra -shared -fPIC -o build/bench/socket-preload.so bench/c/socket-preload.c -ldl
cc -O2 -Wall -Wextra -o build/bench/smc-bench bench/c/smc-bench.c
cc -O2 -Wall -Wextra -o build/bench/socket-loop bench/c/socket-loop.c
sh native/preload/build.sh build/Release/smc-preload.so   # rebuilds only when stale
RUN=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-guest-bench.XXXXXX")
{ echo "export SMC_RUN_BENCH_CLOCK=$clock"; printf 'exec node'; printf ' %q' "$@"; echo; } > "$RUN/bench-job.sh"
rc=0
[ $clock = wall ] || export SMC_RUN_ACCEL=icount
bash test/vm/smcd/boot.sh --timeout "$TIMEOUT" --cpus 2 "${kernel[@]}" "$RUN/bench-job.sh" "$RUN" || rc=$?
log "guest finished rc=$rc"
[ $rc != 0 ] || rm -rf "$RUN"
exit $rc
