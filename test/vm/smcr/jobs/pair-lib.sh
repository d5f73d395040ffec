# shellcheck shell=bash
# Sourced by SMC-R pair jobs (they run in the repo, in guest a or b; see ../boot-pair.sh).
# The two guests share only the run directory ($SMC_RUN_VM_RUN, 9p without caching, so a file one guest
# creates is visible to the other at once): they sync through marker files in it.
#   pair_mark NAME          create $SMC_RUN_VM_RUN/NAME (e.g. b-ready once B's server listens)
#   pair_wait NAME [SECS]   wait until NAME exists; fail early when the peer's guest has finished
#                           (init-smcr writes rc-<peer> when the peer's job ends, however it ends), so a
#                           broken peer costs seconds, not the whole time limit
#   pair_step TEXT          a timestamped heading on the console
: "${SMC_RUN_VM_RUN:?not in an SMC-R guest}" "${SMC_RUN_GUEST_NAME:?}"
PAIR_PEER=$([ "$SMC_RUN_GUEST_NAME" = a ] && echo b || echo a)
pair_mark() { : > "$SMC_RUN_VM_RUN/$1"; }
pair_wait() {
  local f=$SMC_RUN_VM_RUN/$1 limit=${2:-300} start=$SECONDS
  while [ ! -e "$f" ]; do
    if [ -e "$SMC_RUN_VM_RUN/rc-$PAIR_PEER" ]; then
      [ -e "$f" ] && return 0
      echo "pair: guest $PAIR_PEER finished (rc=$(cat "$SMC_RUN_VM_RUN/rc-$PAIR_PEER")) without $1" >&2; return 1
    fi
    ((SECONDS - start < limit)) || { echo "pair: no $1 after ${limit}s" >&2; return 1; }
    sleep 0.2
  done
}
pair_step() { echo "=== [$SMC_RUN_GUEST_NAME $(cut -d' ' -f1 /proc/uptime)s] $*"; }
