#!/usr/bin/env bash
# Lane smcd-burst: the SMC-D connection bursts of Node and of C programs (LD_PRELOAD library) on the 6.12
# loopback-ism kernel lane smcd-6.12 boots, in one guest of their own. run.sh --jobs runs it with no other
# lane beside it (lib.sh ALONE): 2,000 handshakes at once are load-sensitive by nature.
# usage: smcd-burst.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib.sh"
exec bash "$HERE/smcd/boot.sh" --timeout "$(lane_timeout 900)" "$HERE/jobs/smcd-burst.sh" "$1"
