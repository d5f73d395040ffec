#!/usr/bin/env bash
# Lane smcd-newest: the SMC-D suite on the newest kernel Debian serves (the highest linux-source-X.Y in
# trixie-backports, resolved at build time; 7.3 in 2026-11), built with DIBS + DIBS_LO (loopback-ism, 6.18+),
# SMC, SMC_DIAG, SMC_HS_CTRL_BPF and BTF from test/vm/smcd/config-7.x.fragment (the BPF switch and its
# destination policy, a crun container switched by --target). One guest boot.
# usage: smcd-newest.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib.sh"
# shellcheck disable=SC2086
KERNEL=$(bash "$HERE/smcd/build-kernel.sh" ${LANE_KERNEL[smcd-newest]})
# the BPF switch's container tests run Debian's crun and podman, from the host's root that the guest boots
apt_need crun podman
exec bash "$HERE/smcd/boot.sh" --timeout "$(lane_timeout 1500)" --kernel "$KERNEL" "$HERE/jobs/smcd-newest.sh" "$1"
