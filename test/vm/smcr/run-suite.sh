#!/usr/bin/env bash
# The SMC-R real-kernel suite: one boot of the guest pair; vitest in guest a, the peer agent in guest b.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
exec bash "$HERE/boot-pair.sh" --timeout 1200 --grace 60 "$HERE/jobs/suite-a.sh" "$HERE/jobs/suite-b.sh"
