#!/usr/bin/env bash
# npm run test:kernel [-- --target smcd|smcr|all]: the real-kernel suites, each in one guest boot.
# Installs what it needs (qemu, kernel build deps), builds the project on the host first (the guests
# see the repo over 9p), caches kernels under ${XDG_CACHE_HOME:-~/.cache}/smc-run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
TARGET=smcd
while [ $# -gt 0 ]; do
  case $1 in
    --target) TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    *) die "unknown argument $1 (usage: run.sh [--target smcd|smcr|all])" ;;
  esac
done
case $TARGET in smcd|smcr|all) ;; *) die "--target must be smcd, smcr or all" ;; esac
cd "$REPO"
[ -e build/Release/smc_run.node ] || npx node-gyp rebuild >/dev/null
npx tsc -p tsconfig.json
rc=0
if [ "$TARGET" = smcd ] || [ "$TARGET" = all ]; then
  t0=$(date +%s)
  bash "$HERE/smcd/boot.sh" --timeout 1500 "$HERE/jobs/vitest.sh" || rc=$?
  log "SMC-D suite: rc=$rc in $(( $(date +%s) - t0 )) s"
fi
if { [ "$TARGET" = smcr ] || [ "$TARGET" = all ]; } && [ -e "$HERE/smcr/run-suite.sh" ]; then
  t0=$(date +%s)
  r=0; bash "$HERE/smcr/run-suite.sh" || r=$?
  log "SMC-R suite: rc=$r in $(( $(date +%s) - t0 )) s"
  [ $r = 0 ] || rc=$r
fi
exit $rc
