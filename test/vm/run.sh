#!/usr/bin/env bash
# npm run test:kernel [-- --target LANE[,LANE...]|all]: the real-kernel lanes, each one or two guest boots.
# Lanes are scripts in test/vm/lanes/<name>.sh taking a fresh run directory; their guests leave vitest JSON
# reports and `uname -r` in RUN_DIR/results, which lane-report.cjs turns into the lane's one line
#   lane <name> kernel <release>: N passed, N failed, N skipped
# A lane passes only with tests passed and none failed or skipped, and every report it owes present.
# Installs what it needs (qemu, kernel build deps), builds the project on the host first (the guests see
# the repo over 9p), caches kernels under ${XDG_CACHE_HOME:-~/.cache}/smc-run. With SMC_RUN_LANE_TABLE set
# to a file, appends one row per lane to it ("name|kernel|passed failed skipped|result|seconds").
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"


TARGET=smcd
while [ $# -gt 0 ]; do
  case $1 in
    --target) TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    *) die "unknown argument $1 (usage: run.sh [--target LANE[,LANE...]|all])" ;;
  esac
done
known=$(printf '%s ' "${LANES[@]%%:*}")
selected=()
IFS=, read -r -a wanted <<< "$TARGET"
for w in "${wanted[@]}"; do
  if [ "$w" = all ]; then selected+=("${LANES[@]%%:*}"); continue; fi
  w=${ALIAS[$w]:-$w}
  case " $known " in *" $w "*) selected+=("$w") ;; *) die "--target: unknown lane $w (lanes: ${known}all)" ;; esac
done

cd "$REPO"
# The guests run exactly what the package ships: the addon as built and dist/ as `npm run build:ts` left it
# (tsc, then the esbuild bundles of the preload and the CLI); nothing here may rebuild dist/ after that.
[ -e build/Release/smc_run.node ] || npx node-gyp rebuild >/dev/null
[ -s dist/preload.js ] && [ -s dist/cli.mjs ] || die "dist/ is not built: run npm run build:ts first (npm run test:kernel does)"

# tools the guests run from the host root they boot from: Prometheus (and promtool) for the exporter test,
# and the LD_PRELOAD library's programs (test/kernel/smcd/preload-lib.test.ts: both SMC-D lanes run it);
# redis-server for the SMC-R pair's library test (test/kernel/smcr/preload-lib.test.ts); none of them is
# ever started on the host
case " ${selected[*]} " in *" smcd-"*) apt_need prometheus redis-server redis-tools python3 nginx curl ;; esac
case " ${selected[*]} " in *" smcr-6.12 "*) apt_need redis-server ;; esac

rc=0
summary=()
for lane in "${selected[@]}"; do
  reports=1
  for l in "${LANES[@]}"; do [ "${l%%:*}" = "$lane" ] && reports=${l#*:}; done
  dir=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-lane-$lane.XXXXXX")
  log "lane $lane: starting"
  t0=$(date +%s)
  r=0; bash "$HERE/lanes/$lane.sh" "$dir/run" || r=$?
  secs=$(( $(date +%s) - t0 ))
  line=$(node "$HERE/lane-report.cjs" "$lane" "$dir/run/results" --expect-reports "$reports") || r=${r/#0/1}
  [ $r = 0 ] && rm -rf "$dir" || log "lane $lane failed (rc=$r); its run directory is kept: $dir"
  echo "$line"
  log "lane $lane: rc=$r in $secs s"
  summary+=("$(printf '%-14s %-5s %5s s  %s' "$lane" "$([ $r = 0 ] && echo ok || echo FAIL)" "$secs" "$line")")
  if [ -n "${SMC_RUN_LANE_TABLE:-}" ]; then
    k=${line#*kernel }; k=${k%%:*}
    echo "$lane|$k|${line#*: }|$([ $r = 0 ] && echo ok || echo FAIL)|$secs" >> "$SMC_RUN_LANE_TABLE"
  fi
  [ $r = 0 ] || rc=$r
done
echo "== real-kernel lanes"
printf '%s\n' "${summary[@]}"
exit $rc
