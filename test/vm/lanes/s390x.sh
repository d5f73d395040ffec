#!/usr/bin/env bash
# Lane s390x: a big-endian SMC-D guest (qemu-system-s390x, TCG) on a 6.12 kernel built for s390x with
# loopback-ism, Debian s390x userland and Node, the s390x addon prebuild (one guest boot).
# usage: s390x.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib.sh"
exec bash "$HERE/s390x/boot.sh" --timeout "$(lane_timeout 1500)" "$HERE/s390x/job.sh" "$1"
