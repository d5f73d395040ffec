#!/usr/bin/env bash
# Builds (once, into the cache) the guest kernels that the selected lanes boot, one after the other in lane
# order, and runs no lane. usage: kernels.sh [--install-tools] [--target LANE[,LANE...]|all]
# .ci/run starts it in the background at the idle CPU class (chrt --idle) right after `npm ci`: the host
# steps and the guests leave a good part of the 2 cores idle (38% mean over `npm test`, 38% over an SMC-D
# guest suite; sampled from /proc/stat, 2026-12-01), and the builds take that time instead of running
# alone later. A lane whose kernel is still being built waits for it (build-kernel.sh locks per kernel).
# --install-tools only installs the build tools (Debian packages) and exits: .ci/run does that in the
# foreground, so that the background job never runs the system's apt-get while a foreground step may.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
TARGET=all install=0
while [ $# -gt 0 ]; do
  case $1 in
    --install-tools) install=1; shift ;;
    --target) [ $# -ge 2 ] || die "--target needs a value"; TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#*=}; shift ;;
    *) die "unknown argument $1 (usage: kernels.sh [--install-tools] [--target LANE[,LANE...]|all])" ;;
  esac
done
if [ $install = 1 ]; then apt_need "${KERNEL_BUILD_TOOLS[@]}"; exit 0; fi
wanted=,
IFS=, read -r -a ts <<< "$TARGET"
for t in "${ts[@]}"; do wanted+="${ALIAS[$t]:-$t},"; done
rc=0
for l in "${LANES[@]}"; do
  lane=${l%%:*}
  case $wanted in ,all,|*",$lane,"*) ;; *) continue ;; esac
  [ -n "${LANE_KERNEL[$lane]+set}" ] || continue
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if k=$(bash "$HERE/smcd/build-kernel.sh" ${LANE_KERNEL[$lane]}); then
    log "kernel for lane $lane: $k ($(( $(date +%s) - t0 )) s)"
  else
    log "kernel for lane $lane: build failed"; rc=1
  fi
done
exit $rc
