#!/usr/bin/env bash
# Lane smcd-6.12: the full SMC-D suite on a 6.12 kernel built with loopback-ism (containers under crun and
# podman included), the packed tarball on
# SMC-D, the host suite (npm test's) on this SMC kernel, and the hook's SMC-D suites again under Node 26 (one
# guest boot; the host packs the tarball, fills an npm cache and installs Node 26 first: guests have no
# registry).
# usage: smcd-6.12.sh RUN_DIR (new or empty; the guest leaves its results in RUN_DIR/results)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
bash "$HERE/jobs/tarball-smcd.sh" --prepare "$1"
# Node 26 from the host's cache: the guest boots the host root read-only, so the path works inside too
# (a cache under /tmp would not: the guest mounts its own /tmp)
node26=$(bash "$HERE/../../scripts/test-node.sh" 26 --install)
case $node26 in /tmp/*) echo "smcd-6.12: Node 26 is cached under /tmp ($node26), which the guest cannot see" >&2; exit 1 ;; esac
echo "$node26" > "$1/node26-bin"
# the container tests run Debian's crun and podman, from the host's root that the guest boots
. "$HERE/lib.sh"
apt_need crun podman
exec bash "$HERE/smcd/boot.sh" --timeout "$(lane_timeout 2700)" "$HERE/jobs/smcd-6.12.sh" "$1"
