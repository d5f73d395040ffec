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
# --jobs N (or SMC_RUN_LANE_JOBS): lanes side by side. A guest lane keeps about one of this machine's two
# cores busy (measured: one SMC-D guest 47 % of 2 cores, two side by side 87 %, their pair of files in
# 209 s against 131 + 131 s one after the other), so .ci/run runs two at a time.
JOBS=${SMC_RUN_LANE_JOBS:-1}
while [ $# -gt 0 ]; do
  case $1 in
    --target) TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    --jobs) JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#*=}; shift ;;
    *) die "unknown argument $1 (usage: run.sh [--target LANE[,LANE...]|all] [--jobs N])" ;;
  esac
done
case $JOBS in ''|*[!0-9]*|0) die "--jobs: a number of lanes at a time, 1 or more (got '$JOBS')" ;; esac
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

# The prebuilds, built here once before any lane starts (lanes side by side must not write the tree the
# guests read): the packed tarball of lane smcd-6.12 ships all three architectures' (packed with
# --ignore-scripts: its prepack would rebuild dist/), lane s390x boots its own. Unchanged sources skip.
case " ${selected[*]} " in
  *" smcd-6.12 "*) bash scripts/build-prebuilds.sh >&2 ;;
  *" s390x "*) bash scripts/build-prebuilds.sh s390x >&2 ;;
esac

# tools the guests run from the host root they boot from: Prometheus (and promtool) for the exporter test,
# and the LD_PRELOAD library's programs (test/kernel/smcd/preload-lib.test.ts: both SMC-D lanes run it);
# redis-server for the SMC-R pair's library test (test/kernel/smcr/preload-lib.test.ts); none of them is
# ever started on the host
case " ${selected[*]} " in *" smcd-"*) apt_need prometheus redis-server redis-tools python3 nginx curl ;; esac
case " ${selected[*]} " in *" smcr-6.12 "*) apt_need redis-server ;; esac

# run_lane LANE SUMMARY_FILE: one lane, its report line, its table row; its summary line goes to the file
run_lane() {
  local lane=$1 sum=$2 reports=1 l dir t0 r secs line k
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
  printf '%-14s %-5s %5s s  %s\n' "$lane" "$([ $r = 0 ] && echo ok || echo FAIL)" "$secs" "$line" > "$sum"
  if [ -n "${SMC_RUN_LANE_TABLE:-}" ]; then
    k=${line#*kernel }; k=${k%%:*}
    echo "$lane|$k|${line#*: }|$([ $r = 0 ] && echo ok || echo FAIL)|$secs" >> "$SMC_RUN_LANE_TABLE"
  fi
  return $r
}

rc=0
logs=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-lanes.XXXXXX")
if [ "$JOBS" = 1 ]; then
  # one at a time, the output as it comes
  for lane in "${selected[@]}"; do
    run_lane "$lane" "$logs/$lane.sum" || rc=1
  done
else
  # $JOBS lanes at a time, started in the order of LANES as slots free up, except a lane of ALONE, which
  # waits for the others to end and holds the machine to itself; each lane's log is printed whole when it
  # ends, and each gets its qemu timeout times the lanes beside it (lane_timeout)
  declare -A running=()
  next=0 alone=
  while [ $next -lt ${#selected[@]} ] || [ ${#running[@]} -gt 0 ]; do
    while [ $next -lt ${#selected[@]} ] && [ ${#running[@]} -lt "$JOBS" ] && [ -z "$alone" ]; do
      lane=${selected[$next]}
      case " ${ALONE[*]} " in *" $lane "*) [ ${#running[@]} = 0 ] || break; alone=$lane ;; esac
      next=$((next + 1))
      log "lane $lane: started beside ${#running[@]} other(s)"
      SMC_RUN_LANE_JOBS=$([ -n "$alone" ] && echo 1 || echo "$JOBS") run_lane "$lane" "$logs/$lane.sum" > "$logs/$lane.log" 2>&1 &
      running[$!]=$lane
    done
    r=0; wait -n -p done_pid "${!running[@]}" || r=$?
    lane=${running[$done_pid]}; unset "running[$done_pid]"
    [ "$lane" = "$alone" ] && alone=
    echo "== lane $lane"; cat "$logs/$lane.log"
    [ $r = 0 ] || rc=1
  done
fi
echo "== real-kernel lanes"
for lane in "${selected[@]}"; do cat "$logs/$lane.sum" 2>/dev/null || echo "$lane: no summary"; done
rm -rf "$logs"
exit $rc
