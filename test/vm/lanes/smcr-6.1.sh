#!/usr/bin/env bash
# Lane smcr-6.1: the SMC-R core suite on Debian 12 (bookworm)'s stock 6.1 kernel over SoftRoCE (one boot
# of the pair; vitest in guest a, the peer agent in guest b): no IPPROTO_SMC, no loopback-ism, five sysctls.
# usage: smcr-6.1.sh RUN_DIR (new or empty)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib.sh"
exec bash "$HERE/smcr/boot-pair.sh" --release bookworm --timeout "$(lane_timeout 1200)" --grace 60 "$HERE/smcr/jobs/suite-6.1-a.sh" "$HERE/smcr/jobs/suite-b.sh" "$1"
