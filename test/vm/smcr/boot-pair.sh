#!/usr/bin/env bash
# Boot the two SMC-R guests and run JOB_A in guest a and JOB_B in guest b (bash scripts, run in the repo).
# usage: boot-pair.sh [--release trixie|bookworm] [--no-ueid] [--timeout SECONDS] [--mem MiB] [--grace SECONDS]
#                     JOB_A JOB_B [RUN_DIR]
#
# Each guest is a Debian release's stock kernel (--release, default $SMC_RUN_SMCR_RELEASE, else trixie:
# 6.12; bookworm: 6.1; test/vm/smcr/build-initramfs.sh, cached) with the host
# root read-only over 9p, 1 vCPU and --mem MiB (default 2048: with 1024 a 2,000-connection burst lost
# connections even on plain TCP, in thousands of retransmission timeouts), under TCG unless real KVM is available
# (lib.sh accel_args). The guests are joined by a qemu socket netdev on a free 127.0.0.1 port chosen at run
# time (b listens, a connects); their subnet 10.99.0.0/24 exists only inside the guests:
#   a = 10.99.0.1 (client side by convention), b = 10.99.0.2 (server side)
# Each gets SoftRoCE rxe0 on eth0 and the UEID SMC-RUN-TEST (--no-ueid: none, so SMC-R must fall back with
# 0x03030000), then runs its job with SMC_RUN_GUEST_IP, SMC_RUN_PEER_IP, SMC_RUN_GUEST_NAME (a|b),
# SMC_RUN_VM_RUN and SMC_RUN_REPO set (test/vm/guest/init-smcr).
#
# Syncing the two jobs: both guests mount the same RUN_DIR (uncached 9p, so files one guest creates show up
# in the other at once). Jobs source jobs/pair-lib.sh and use marker files, by convention:
#   b: start the server, `pair_mark b-ready` once it listens; finish after `pair_wait a-done`
#   a: `pair_wait b-ready`, do the client work, `pair_mark a-done` (from an EXIT trap, so it always happens)
# pair_wait also gives up as soon as the peer's rc-<peer> appears (its job ended), so a failing guest does
# not leave the other waiting for its whole time limit.
#
# Results: each guest writes its job's exit code to RUN_DIR/rc-a, rc-b and its dmesg to dmesg-a.txt,
# dmesg-b.txt; qemu logs the serial consoles to console-a.log, console-b.log (also streamed to stdout,
# prefixed [a] / [b]) and its own messages to qemu-a.log, qemu-b.log. A missing exit code (timeout, crash)
# is a failure. Exit 0 only if both jobs exited 0. On failure those files are copied to
# <repo>/test-results/smcr-*; on success a temporary RUN_DIR is removed. RUN_DIR, when given, must be empty
# or new (stale markers from an earlier run would break the sync).
# --timeout (default 600) bounds each qemu; --grace (default 30): once one guest has failed (nonzero or
# missing exit code), the other gets this long to finish before it is stopped.
# SMC_RUN_KERNEL_ARGS: extra kernel command line for both guests (debugging, e.g. loglevel=7).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
REPO=$(cd "$HERE/../../.." && pwd)
UEID=SMC-RUN-TEST TIMEOUT=600 MEM=2048 GRACE=30 REL=${SMC_RUN_SMCR_RELEASE:-trixie}
while [ $# -gt 0 ]; do
  case $1 in
    --release) REL=$2; shift 2 ;;
    --no-ueid) UEID=none; shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --grace) GRACE=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || die "usage: boot-pair.sh [--release R] [--no-ueid] [--timeout S] [--mem MiB] [--grace S] JOB_A JOB_B [RUN_DIR]"
[ "$MEM" -le 2048 ] || die "at most 2048 MiB per guest"
JOB_A=$(readlink -f "$1") JOB_B=$(readlink -f "$2")
[ -f "$JOB_A" ] && [ -f "$JOB_B" ] || die "job not found: $1 / $2"
RUN=${3:-}
keep=1
[ -n "$RUN" ] || { RUN=$(mktemp -d "${TMPDIR:-/tmp}/smc-run-smcr.XXXXXX"); keep=0; }
mkdir -p "$RUN"; RUN=$(cd "$RUN" && pwd)
[ -z "$(ls -A "$RUN")" ] || die "RUN_DIR $RUN is not empty (stale sync markers would confuse the jobs)"
# the kernel command line is split at spaces: paths with blanks cannot be passed through it
case "$REPO$RUN" in *[[:space:]]*) die "the repo and run paths must not contain blanks" ;; esac

apt_need qemu-system-x86 iproute2
KDIR=$("$HERE/build-initramfs.sh" --release "$REL")
KERNEL=$KDIR/vmlinux
[ -s "$KERNEL" ] || KERNEL=$KDIR/vmlinuz
stage_job "$JOB_A" "$RUN/job-a.sh"
stage_job "$JOB_B" "$RUN/job-b.sh"

declare -A PID=()
cleanup() {
  local n
  for n in "${!PID[@]}"; do kill "${PID[$n]}" 2>/dev/null || true; done
  for n in "${!PID[@]}"; do wait "${PID[$n]}" 2>/dev/null || true; done
}
# never leave a qemu behind: on any exit, stop what is still running (timeout passes the TERM to qemu)
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_guest NAME IP PEER NETDEV MAC: qemu under timeout, in the background; PID[NAME] is timeout's PID
start_guest() {
  local name=$1 ip=$2 peer=$3 netdev=$4 mac=$5
  # pci=noacpi: PCI interrupts routed by the BIOS table instead of ACPI methods, which the guest would
  # interpret slowly under TCG (about 0.5 s per link device, a second or two per boot)
  local append="console=ttyS0 loglevel=4 panic=-1 pci=noacpi smcrun.init=$REPO/test/vm/guest/init-smcr"
  append+=" smcrun.repo=$REPO smcrun.run=$RUN smcrun.job=$RUN/job-$name.sh smcrun.name=$name"
  append+=" smcrun.ip=$ip smcrun.peer=$peer smcrun.ueid=$UEID"
  append+=" ${SMC_RUN_KERNEL_ARGS:-}"
  # shellcheck disable=SC2046
  timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 $(accel_args) -smp 1 -m "$MEM" -M pc \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$KERNEL" -initrd "$KDIR/initramfs.cpio.gz" -append "$append" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$REPO",mount_tag=repo,security_model=none,multidevs=remap \
    -virtfs local,path="$RUN",mount_tag=run,security_model=none,multidevs=remap \
    -device virtio-rng-pci \
    -netdev "$netdev" -device virtio-net-pci,netdev=n0,mac="$mac" \
    -chardev stdio,id=con,signal=off,logfile="$RUN/console-$name.log" -serial chardev:con -monitor none \
    </dev/null 2>>"$RUN/qemu-$name.log" > >(sed -u "s/^/[$name] /") &
  PID[$name]=$!
}

# A free loopback port, picked now because other guests (other pairs, other users) may run beside this
# one. Picking and binding are not atomic: if b's qemu then fails to bind, another port is tried.
pick_port() {
  local p _
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768+), where outgoing connections take ports
    [ -z "$(ss -Htan "( sport = :$p or dport = :$p )")" ] && { echo "$p"; return 0; }
  done
  die "no free port found"
}

t0=$SECONDS
log "kernel $(cat "$KDIR/kver"), run dir $RUN"
PORT=
for attempt in 1 2 3 4 5; do
  p=$(pick_port)
  start_guest b 10.99.0.2/24 10.99.0.1 "socket,id=n0,listen=127.0.0.1:$p" 52:54:00:53:52:0b
  # a may only connect once b's qemu listens (else a's qemu exits at once); ss shows the owning process
  # only to root, which the harness is anyway (9p with security_model=none reads the host root as root)
  for _ in $(seq 100); do
    if ss -Hltnp "sport = :$p" | grep -q qemu; then PORT=$p; break; fi
    kill -0 "${PID[b]}" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$PORT" ] && break
  log "guest b did not listen on 127.0.0.1:$p (attempt $attempt: $(tail -n 1 "$RUN/qemu-b.log" 2>/dev/null)), retrying"
  kill "${PID[b]}" 2>/dev/null || true; wait "${PID[b]}" 2>/dev/null || true; unset 'PID[b]'
done
[ -n "$PORT" ] || die "guest b's qemu could not listen on a loopback port: $(tail -n 3 "$RUN/qemu-b.log" 2>/dev/null)"
log "guest b listens on 127.0.0.1:$PORT; starting guest a"
start_guest a 10.99.0.1/24 10.99.0.2 "socket,id=n0,connect=127.0.0.1:$PORT" 52:54:00:53:52:0a

# ok NAME: the guest finished with exit code 0
ok() { [ "$(cat "$RUN/rc-$1" 2>/dev/null)" = 0 ]; }
running() { kill -0 "${PID[$1]}" 2>/dev/null; }
# Wait for both. A guest that ends successfully puts no limit on the other; one that failed does: the
# pair has failed already, so the other only gets --grace seconds to write its logs. A guest that has
# written its exit code but is still up 60 s later is stopped: its kernel hangs in the power-off (seen
# when the peer vanished mid-link), and all it had to say is in the run directory already.
declare -A DONE_AT=()
while running a || running b; do
  for n in a b; do
    if running $n && [ -s "$RUN/rc-$n" ]; then
      : "${DONE_AT[$n]:=$SECONDS}"
      if ((SECONDS - DONE_AT[$n] > 60)); then
        log "guest $n finished its job but did not power off within 60 s; stopping it"
        kill "${PID[$n]}" 2>/dev/null || true
        DONE_AT[$n]=$((SECONDS + 3600))
      fi
    fi
    other=$([ $n = a ] && echo b || echo a)
    if ! running $n && ! ok $n && running "$other"; then
      log "guest $n failed; giving guest $other ${GRACE}s to finish"
      for _ in $(seq $((GRACE * 10))); do running "$other" || break; sleep 0.1; done
      running "$other" && { log "stopping guest $other"; kill "${PID[$other]}" 2>/dev/null || true; }
      break 2
    fi
  done
  sleep 0.2
done
for n in a b; do wait "${PID[$n]}" 2>/dev/null || true; done
PID=()

fail=0
for n in a b; do
  if [ ! -s "$RUN/rc-$n" ]; then
    echo "[smc-run vm] guest $n left no exit code (timeout after ${TIMEOUT}s, crash or stopped); console: $RUN/console-$n.log" >&2; fail=1
  elif ! ok $n; then
    echo "[smc-run vm] guest $n: job failed (rc=$(cat "$RUN/rc-$n"))" >&2; fail=1
  fi
done
log "pair finished in $((SECONDS - t0)) s: rc a=$(cat "$RUN/rc-a" 2>/dev/null || echo none) b=$(cat "$RUN/rc-b" 2>/dev/null || echo none)"
if [ $fail != 0 ]; then
  mkdir -p "$REPO/test-results"
  # this run's files only: an earlier failure's must not be mistaken for this one's
  rm -f "$REPO"/test-results/smcr-console-[ab].log "$REPO"/test-results/smcr-dmesg-[ab].txt "$REPO"/test-results/smcr-qemu-[ab].log
  for n in a b; do
    cp "$RUN/console-$n.log" "$REPO/test-results/smcr-console-$n.log" 2>/dev/null || true
    cp "$RUN/dmesg-$n.txt" "$REPO/test-results/smcr-dmesg-$n.txt" 2>/dev/null || true
    # qemu's own messages (bind/connect errors, emulation warnings), when it printed any
    if [ -s "$RUN/qemu-$n.log" ]; then cp "$RUN/qemu-$n.log" "$REPO/test-results/smcr-qemu-$n.log"; fi
  done
  echo "[smc-run vm] consoles and dmesg in $REPO/test-results/smcr-*; run dir $RUN" >&2
  exit 1
fi
[ $keep = 1 ] || rm -rf "$RUN"
exit 0
