#!/usr/bin/env bash
# Boot the s390x (big-endian) SMC-D guest once under qemu-system-s390x (TCG) and run JOB (a bash script)
# inside it, in the repo. usage: boot.sh [--no-ueid] [--timeout SECONDS] [--mem MiB] [--cpus N] JOB [RUN_DIR]
# Kernel: test/vm/smcd/build-kernel.sh --arch s390x (6.12, SMC + SMC_DIAG + loopback-ism, virtio-ccw, 9p).
# Root: Debian s390x packages (test/vm/s390x/build-root.sh), read-only over virtio-9p-ccw; the repo and the
# run directory are 9p shares at their host paths, and the guest's PID 1 is the same test/vm/guest/init as
# the x86 SMC-D guest's. The addon is the s390x prebuild (scripts/build-prebuilds.sh s390x, cross-built),
# given to Node as SMC_RUN_ADDON (the repo's build/Release holds the host's x86 addon).
# The job's exit code is read back from the run directory; a missing code is a failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
REPO=$(cd "$HERE/../../.." && pwd)
UEID=SMC-RUN-TEST TIMEOUT=900 MEM=2048 CPUS=2
while [ $# -gt 0 ]; do
  case $1 in
    --no-ueid) UEID=none; shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
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
apt_need qemu-system-misc
t0=$(date +%s)
# the s390x addon as the package ships it (rebuilt only when native/ changed since the last build)
bash "$REPO/scripts/build-prebuilds.sh" s390x >&2 || die "cannot build the s390x addon (scripts/build-prebuilds.sh s390x)"
ADDON=$REPO/prebuilds/linux-s390x/smc_run.glibc.node
[ -s "$ADDON" ] || die "no s390x addon at $ADDON"
# shellcheck disable=SC2086
KERNEL=$("$REPO/test/vm/smcd/build-kernel.sh" ${LANE_KERNEL[s390x]})
ROOT=$("$HERE/build-root.sh")
log "s390x addon, kernel $KERNEL, root $ROOT ready in $(( $(date +%s) - t0 )) s"
# the guest mounts the repo over its (read-only) root at the host's path: the mount point must exist there;
# PID 1 starts before that mount, so the root holds a copy of the guest's init. virtio-ccw sets its devices
# online asynchronously (virtio_ccw_auto_online): PID 1 first waits until all three 9p shares are there.
mkdir -p "$ROOT$REPO"
cp "$REPO/test/vm/guest/init" "$ROOT/smc-run-guest-init"
cat > "$ROOT/smc-run-init" <<'INIT'
#!/bin/bash
mkdir -p /dev/.sys && mount -t sysfs sysfs /dev/.sys
for _ in $(seq 300); do
  tags=$(for f in /dev/.sys/bus/virtio/devices/*/mount_tag; do [ -r "$f" ] && echo "$(tr -d '\0\n' < "$f")"; done | sort | tr '\n' ' ')
  [ "$tags" = "hostroot repo run " ] && break
  sleep 0.1
done
umount /dev/.sys && rmdir /dev/.sys
exec /smc-run-guest-init "$@"
INIT
chmod 755 "$ROOT/smc-run-init"
stage_job "$JOB" "$RUN/job.sh"
ROLLDOWN=$(cd "$ROOT" && ls opt/rolldown/*.node)
APPEND="console=ttysclp0 loglevel=4 panic=-1 root=hostroot rootfstype=9p"
APPEND+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
APPEND+=" init=/smc-run-init smcrun.repo=$REPO smcrun.run=$RUN smcrun.job=$RUN/job.sh"
APPEND+=" smcrun.ip=10.0.0.1/24 smcrun.ueid=$UEID smcrun.name=smcd-s390x"
# unknown name=value parameters reach PID 1 as environment variables, and so every process of the guest
APPEND+=" SMC_RUN_ADDON=$ADDON NAPI_RS_NATIVE_LIBRARY_PATH=/$ROLLDOWN"
fs() { echo "-fsdev local,id=$1,path=$2,security_model=none,multidevs=remap${3:-} -device virtio-9p-ccw,fsdev=$1,mount_tag=$1"; }
log "booting the s390x guest (qemu-system-s390x, TCG, $CPUS CPUs, $MEM MiB)"
# shellcheck disable=SC2046
timeout --kill-after=10 "$TIMEOUT" qemu-system-s390x -M s390-ccw-virtio -accel tcg,thread=multi,tb-size=256 -cpu max \
  -smp "$CPUS" -m "$MEM" -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$KERNEL" -append "$APPEND" \
  $(fs hostroot "$ROOT" ,readonly=on) $(fs repo "$REPO") $(fs run "$RUN") \
  -device virtio-rng-ccw \
  -netdev hubport,id=n0,hubid=0 -device virtio-net-ccw,netdev=n0,mac=52:54:00:53:4d:02 \
  -chardev stdio,id=con0,signal=off -device sclpconsole,chardev=con0 -monitor none </dev/null 2>&1 |
  grep -v 'hub 0 is not connected' | tee "$RUN/console.log" || true
if [ ! -s "$RUN/rc" ]; then
  echo "[smc-run vm] s390x guest left no exit code (timeout after ${TIMEOUT}s or crash); console: $RUN/console.log" >&2
  exit 1
fi
rc=$(cat "$RUN/rc")
if [ "$rc" != 0 ]; then
  mkdir -p "$REPO/test-results"
  cp "$RUN/console.log" "$REPO/test-results/s390x-console.log"
  cp "$RUN/dmesg.txt" "$REPO/test-results/s390x-dmesg.txt" 2>/dev/null || true
  echo "[smc-run vm] s390x guest job failed (rc=$rc); console and dmesg in test-results/" >&2
elif [ $keep = 0 ]; then
  rm -rf "$RUN"
fi
exit "$rc"
