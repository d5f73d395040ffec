#!/usr/bin/env bash
# Lane smcr-6.12: the full SMC-R suite on Debian trixie's stock 6.12 over SoftRoCE (one boot of the pair;
# vitest in guest a, the peer agent in guest b, the power-cut test in a second vitest run at the end).
# usage: smcr-6.12.sh RUN_DIR (new or empty)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib.sh"
exec bash "$HERE/smcr/boot-pair.sh" --timeout "$(lane_timeout 1200)" --grace 60 "$HERE/smcr/jobs/suite-a.sh" "$HERE/smcr/jobs/suite-b.sh" "$1"
