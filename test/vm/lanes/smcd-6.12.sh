#!/usr/bin/env bash
# Lane smcd-6.12: the full SMC-D suite on a 6.12 kernel built with loopback-ism (one guest boot).
# usage: smcd-6.12.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$HERE/smcd/boot.sh" --timeout 1500 "$HERE/jobs/vitest.sh" "$1"
