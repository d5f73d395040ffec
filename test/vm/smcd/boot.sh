#!/usr/bin/env bash
# Boot the SMC-D (loopback-ism) guest once and run JOB (a bash script) inside it, in the repo.
# usage: boot.sh [--no-ueid] [--timeout SECONDS] [--mem MiB] [--cpus N] [--kernel BZIMAGE] JOB [RUN_DIR]
# --kernel: boot that kernel (e.g. from build-kernel.sh --series ...) instead of the default 6.12 build.
# The job's exit code is read back from the run directory; a missing code is a failure.
# Console and dmesg land in RUN_DIR (default: a fresh temp dir, removed on success).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
REPO=$(cd "$HERE/../../.." && pwd)
UEID=SMC-RUN-TEST TIMEOUT=900 MEM=1536 CPUS=2 KERNEL=
while [ $# -gt 0 ]; do
  case $1 in
    --no-ueid) UEID=none; shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --kernel) KERNEL=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
JOB=$(readlink -f "${1:?usage: boot.sh [--no-ueid] JOB [RUN_DIR]}")
RUN=${2:-}
keep=1
[ -n "$RUN" ] || { RUN=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-vm.XXXXXX"); keep=0; }
mkdir -p "$RUN"; RUN=$(cd "$RUN" && pwd)
rm -f "$RUN/rc"
apt_need qemu-system-x86 iproute2
# shellcheck disable=SC2086
[ -n "$KERNEL" ] || KERNEL=$("$HERE/build-kernel.sh" ${LANE_KERNEL[smcd-6.12]})
[ -s "$KERNEL" ] || die "--kernel: no kernel image at $KERNEL"
stage_job "$JOB" "$RUN/job.sh"
APPEND="console=ttyS0 loglevel=4 panic=-1 root=hostroot rootfstype=9p"
APPEND+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
APPEND+=" init=$REPO/test/vm/guest/init smcrun.repo=$REPO smcrun.run=$RUN smcrun.job=$RUN/job.sh"
APPEND+=" smcrun.ip=10.0.0.1/24 smcrun.ueid=$UEID smcrun.name=smcd"
# shellcheck disable=SC2046
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 $(accel_args) -smp "$CPUS" -m "$MEM" -M pc \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$KERNEL" -append "$APPEND" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$REPO",mount_tag=repo,security_model=none,multidevs=remap \
  -virtfs local,path="$RUN",mount_tag=run,security_model=none,multidevs=remap \
  -device virtio-rng-pci \
  -netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0,mac=52:54:00:53:4d:01 \
  -serial stdio -monitor none </dev/null 2>&1 | grep -v 'hub 0 is not connected' | tee "$RUN/console.log" || true
if [ ! -s "$RUN/rc" ]; then
  echo "[smc-run vm] guest left no exit code (timeout after ${TIMEOUT}s or crash); console: $RUN/console.log" >&2
  exit 1
fi
rc=$(cat "$RUN/rc")
if [ "$rc" != 0 ]; then
  mkdir -p "$REPO/test-results"
  cp "$RUN/console.log" "$REPO/test-results/smcd-console.log"
  cp "$RUN/dmesg.txt" "$REPO/test-results/smcd-dmesg.txt" 2>/dev/null || true
  echo "[smc-run vm] guest job failed (rc=$rc); console and dmesg in test-results/" >&2
elif [ $keep = 0 ]; then
  rm -rf "$RUN"
fi
exit "$rc"
