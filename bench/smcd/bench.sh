#!/usr/bin/env bash
# npm run bench [-- OPTIONS]: the SMC-D benchmark (issue 12). Builds on the host (TypeScript, the C
# reference into build/bench/), boots the SMC-D guest once, runs bench/smcd/run.cjs in it (results in
# bench/results/smcd-runs.json) and regenerates the report (bench/results/smcd-summary.json, the SMC-D
# section of bench/REPORT.md, bench/charts/smcd.svg) with bench/smcd/report.cjs.
# OPTIONS: --runs N (5)  --quick (shorter windows)  --impl node,c  --configs tcp,smcd,smcd-1m-opt,smcd-1m-sysctl
#          --timeout SECONDS (guest, 2400)  --cpus N (guest vCPUs, 2)  --no-report
# Other engineers' guests slow this one down: on a shared machine run it under an exclusive lock.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/test/vm/lib.sh"
cd "$REPO"
TIMEOUT=2400 CPUS=2 REPORT=1 ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) TIMEOUT=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --no-report) REPORT=0; shift ;;
    --runs|--impl|--configs) ARGS+=("$1" "$2"); shift 2 ;;
    --quick) ARGS+=("$1"); shift ;;
    *) die "unknown option $1 (see the header of bench/smcd/bench.sh)" ;;
  esac
done
[ -e build/Release/smc_run.node ] || npx node-gyp rebuild >/dev/null
npm run -s build:ts
mkdir -p build/bench
cc -O2 -Wall -Wextra -o build/bench/smc-bench bench/c/smc-bench.c
case $(accel_args) in *tcg*) ACCEL=tcg ;; *) ACCEL=kvm ;; esac
RUN=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-bench.XXXXXX")
# boot.sh runs a job file without arguments: the options are written into it
{
  echo "export SMC_BENCH_ACCEL=$ACCEL"
  printf 'exec node bench/smcd/run.cjs'; [ ${#ARGS[@]} = 0 ] || printf ' %q' "${ARGS[@]}"; echo
} > "$RUN/bench-job.sh"
rc=0
bash test/vm/smcd/boot.sh --timeout "$TIMEOUT" --cpus "$CPUS" "$RUN/bench-job.sh" "$RUN" || rc=$?
log "guest finished rc=$rc (3: some pairs were rejected by the SMC checks; see the report)"
if [ $REPORT = 1 ] && [ -s bench/results/smcd-runs.json ]; then node bench/smcd/report.cjs; fi
[ $rc != 0 ] || rm -rf "$RUN"
exit $rc
