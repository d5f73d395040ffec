#!/usr/bin/env bash
# Lane smcd-6.12: the full SMC-D suite on a 6.12 kernel built with loopback-ism (containers under crun and
# podman included), the packed tarball on
# SMC-D, and the host suite (npm test's) on this SMC kernel (one guest boot; the host packs the tarball and
# fills an npm cache first: guests have no registry).
# usage: smcd-6.12.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
bash "$HERE/jobs/tarball-smcd.sh" --prepare "$1"
# the container tests run Debian's crun and podman, from the host's root that the guest boots
. "$HERE/lib.sh"
apt_need crun podman
# the LD_PRELOAD library's programs (test/kernel/smcd/preload-lib.test.ts); never started on the host
apt_need redis-server redis-tools python3
exec bash "$HERE/smcd/boot.sh" --timeout 2700 "$HERE/jobs/smcd-6.12.sh" "$1"
