#!/usr/bin/env bash
# Proves a newcomer's `npm install && npm test` passes on a fresh Debian 12 machine that has only git, Node
# and npm: a bookworm minbase chroot (debootstrap, cached as a tarball), git from Debian, this host's Node
# and npm copied in, a plain clone of this repo's HEAD, then `npm install` and `npm test` as root inside it.
# npm test's first step (scripts/test-prereqs.sh) has to install every other tool it needs with apt-get.
# usage (root, from the repo): bash test/fresh/run.sh      prints both times and the test output's tail;
# exits with npm test's status (or the step that failed before it).
#
# What the chroot gets beyond "git, Node, npm", all about this sandbox rather than the project:
# - the host's CA bundle, as NODE_EXTRA_CA_CERTS: TLS to the npm registry passes an intercepting proxy here
#   whose CA no stock system trusts (a newcomer's machine on an open network needs none of it);
# - Node's headers (include/node) next to the binary, as in Node's own tarball: node-gyp would otherwise
#   download them from the Node project's site, which this machine cannot reach;
# - /etc/hosts with localhost (a Debian install writes one; debootstrap does not), and a policy-rc.d so
#   packages' postinst scripts start no daemons (a chroot has no init system).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../vm/lib.sh
. "$REPO/test/vm/lib.sh"             # MIRROR (this machine's apt archive), apt_need, log, die
flog() { echo "[smc-run fresh $(date +%T)] $*" >&2; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, mounts)"
SUITE=bookworm
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/smc-run
TARBALL=$CACHE/fresh-$SUITE-minbase.tar
TIMEOUT_S=$((40 * 60))
CHROOT_PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
NODE_BIN=$(readlink -f "$(command -v node)") || die "no node on PATH"
NODE_PREFIX=$(dirname "$(dirname "$(command -v node)")")
NPM_DIR=$NODE_PREFIX/lib/node_modules/npm
[ -f "$NPM_DIR/bin/npm-cli.js" ] || die "no npm at $NPM_DIR"
HOST_CA=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}

WORK=$(mktemp -d /tmp/smc-run-fresh.XXXXXX)
ROOT=$WORK/root
mkdir -p "$ROOT"

# --- cleanup: every process whose root is the chroot (only this run starts those), then every mount
chroot_pids() {
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case $r in "$ROOT" | "$ROOT"/*) echo "${p#/proc/}" ;; esac
  done
}
cleanup() {
  local rc=$? pids i
  set +e
  for i in 1 2 3 4 5 6; do
    pids=$(chroot_pids)
    [ -n "$pids" ] || break
    flog "ending what is left running in the chroot: $(echo $pids)"
    if [ "$i" -lt 4 ]; then kill -TERM $pids 2>/dev/null; else kill -KILL $pids 2>/dev/null; fi
    sleep 1
  done
  if mountpoint -q "$ROOT"; then
    umount -R "$ROOT" 2>/dev/null || { sleep 2; umount -R "$ROOT" 2>/dev/null; } || umount -R -l "$ROOT"
  fi
  if grep -q " $ROOT[ /]" /proc/self/mountinfo; then
    flog "error: mounts left under $ROOT; not removing $WORK"
  else
    rm -rf --one-file-system "$WORK"
  fi
  flog "cleaned up"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- 1. the minbase rootfs, debootstrapped once and cached as a tarball
t0=$(date +%s)
if [ -s "$TARBALL" ]; then
  flog "minbase rootfs from the cache ($TARBALL)"
  debootstrap_s=0
else
  apt_need debootstrap
  flog "debootstrap --variant=minbase $SUITE (mirror from the apt configuration)"
  mkdir -p "$CACHE"
  build=$WORK/debootstrap
  nice -n 10 debootstrap --variant=minbase "$SUITE" "$build" "$MIRROR" > "$WORK/debootstrap.log" 2>&1 || {
    tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -f "$build/etc/resolv.conf"   # the host's, copied in again on each run
  nice -n 10 tar -C "$build" --numeric-owner --xattrs -cf "$TARBALL.part" . && mv "$TARBALL.part" "$TARBALL"
  rm -rf --one-file-system "$build"
  debootstrap_s=$(($(date +%s) - t0))
  flog "debootstrap: ${debootstrap_s}s"
fi
nice -n 10 tar -C "$ROOT" --numeric-owner --xattrs -xf "$TARBALL"

# --- 2. the machine: mounts, resolv.conf, hosts, sources.list, git from Debian, the host's Node and npm
mount --bind "$ROOT" "$ROOT"       # one mount tree for the run: private, and `umount -R` takes it all
mount --make-rprivate "$ROOT"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount -t devtmpfs devtmpfs "$ROOT/dev"   # the kernel's one devtmpfs (the host's /dev too): written nothing
[ -d "$ROOT/dev/pts" ] && [ -d "$ROOT/dev/shm" ] && [ -e "$ROOT/dev/ptmx" ] || die "devtmpfs lacks pts/, shm/ or ptmx"
mount -t devpts -o newinstance,gid=5,mode=620,ptmxmode=666 devpts "$ROOT/dev/pts"
mount --bind "$ROOT/dev/pts/ptmx" "$ROOT/dev/ptmx"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/tmp"
mount -t tmpfs -o mode=755 tmpfs "$ROOT/run"
mkdir -p -m 1777 "$ROOT/run/lock"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
[ -s "$ROOT/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$ROOT/etc/hosts"
printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"
echo "deb $MIRROR $SUITE main" > "$ROOT/etc/apt/sources.list"

in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=$CHROOT_PATH LANG=C.UTF-8 "$@"; }
flog "apt-get install git (inside the chroot)"
nice -n 10 chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=$CHROOT_PATH DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends git >/dev/null'

flog "the host's Node $("$NODE_BIN" --version) and its npm into /usr/local"
mkdir -p "$ROOT/usr/local/bin" "$ROOT/usr/local/lib/node_modules" "$ROOT/usr/local/include" "$ROOT/usr/local/share/host-ca"
cp "$NODE_BIN" "$ROOT/usr/local/bin/node"
cp -a "$NPM_DIR" "$ROOT/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
if [ -f "$NODE_PREFIX/include/node/node_api.h" ]; then cp -a "$NODE_PREFIX/include/node" "$ROOT/usr/local/include/node"; fi
cp -L "$HOST_CA" "$ROOT/usr/local/share/host-ca/ca.crt"
CA_ENV=NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca/ca.crt

# what the newcomer's machine has: nothing the suite needs but git, node and npm
for t in git node npm npx; do in_root sh -c "command -v $t >/dev/null" || die "$t missing in the chroot"; done
for t in cc gcc g++ make python3 clang promtool; do
  ! in_root sh -c "command -v $t >/dev/null" || die "$t is already in the fresh root"
done

# --- 3. a plain clone of HEAD, then npm install and npm test as root, 40 minutes for both
git clone -q "$REPO" "$ROOT/root/smc-run"
flog "cloned $(git -C "$ROOT/root/smc-run" log -1 --format='%h %s' | cut -c1-100)"
deadline=$(($(date +%s) + TIMEOUT_S))
step() { # step NAME LOG CMD: runs CMD in the repo inside the chroot with what is left of the 40 minutes
  local left=$((deadline - $(date +%s)))
  ((left > 0)) || { echo "timed out before $1" >> "$2"; return 124; }
  nice -n 10 timeout --kill-after=30 "$left" \
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=$CHROOT_PATH LANG=C.UTF-8 "$CA_ENV" \
    sh -c "cd /root/smc-run && $3" > "$2" 2>&1
}
t=$(date +%s)
install_rc=0
step "npm install" "$WORK/install.log" "npm install" || install_rc=$?
install_s=$(($(date +%s) - t))
flog "npm install: ${install_s}s (exit $install_rc)"
if [ "$install_rc" != 0 ]; then
  tail -n 30 "$WORK/install.log"
  exit "$install_rc"
fi
t=$(date +%s)
test_rc=0
step "npm test" "$WORK/test.log" "npm test" || test_rc=$?
test_s=$(($(date +%s) - t))
[ "$test_rc" != 124 ] || echo "npm test: timed out (40 minutes for npm install and npm test)" >> "$WORK/test.log"
mkdir -p "$CACHE" && cp "$WORK/install.log" "$CACHE/fresh-last-install.log" && cp "$WORK/test.log" "$CACHE/fresh-last-test.log"
echo "----- npm test: last 30 lines (whole log: $CACHE/fresh-last-test.log) -----"
tail -n 30 "$WORK/test.log"
echo "-----"
echo "debootstrap: ${debootstrap_s}s$([ "$debootstrap_s" != 0 ] || echo ' (cached rootfs)')"
echo "npm install: ${install_s}s"
echo "npm test:    ${test_s}s (exit $test_rc)"
exit "$test_rc"
