#!/usr/bin/env bash
# Build (once) the s390x guest's root filesystem: Debian trixie's s390x packages (bash, coreutils,
# util-linux, iproute2, procps, nodejs and their dependencies, as the archive serves them today) unpacked
# with dpkg-deb -x, no maintainer scripts run (nothing in the guest needs them). The guest mounts it
# read-only over 9p. Node comes from Debian's nodejs: the npm registry's node-linux-s390x stops at 20.11,
# which vitest 4 (vite 8, rolldown) cannot run on (node:util has no styleText before 20.12).
# Also fetches rolldown's s390x binding (npm: @rolldown/binding-linux-s390x-gnu, the version of the
# rolldown in node_modules), which vitest needs to load its config on s390x.
# Prints the root's path on stdout. Cached under $XDG_CACHE_HOME/smc-run/root-s390x-<hash>.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
. "$HERE/../lib.sh"
PKGS=(bash dash coreutils util-linux mount iproute2 procps hostname grep sed findutils gzip nodejs)
ROLLDOWN=$(node -p "require('$REPO/node_modules/rolldown/package.json').version")
KEY=$( (echo "${PKGS[*]} rolldown $ROLLDOWN"; cat "$0") | sha256sum | cut -c1-16)
OUT=$CACHE_ROOT/root-s390x-$KEY
if [ -e "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi

# a private apt state per release: s390x as the only architecture, an empty dpkg status (so apt resolves
# every dependency), the archive from this machine's apt configuration. Debian's archive serves only
# current s390x builds and some trixie point-release updates (glibc, openssl, nodejs, ...) are listed for
# s390x but not served (404): then the next release in $RELEASES (testing) is used, said in one line.
fetch() { # fetch RELEASE: downloads PKGS and dependencies into $st/cache/archives, or fails
  st=$CACHE_ROOT/apt-$1-s390x
  mkdir -p "$st/state/lists/partial" "$st/cache/archives/partial"
  echo "deb $MIRROR $1 main" > "$st/sources.list"
  : > "$st/state/status"
  o=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State="$st/state"
     -o Dir::State::status="$st/state/status" -o Dir::Cache="$st/cache" -o APT::Architecture=s390x
     -o APT::Architectures::=s390x -o APT::Sandbox::User=root -o Debug::NoLocking=1 -o Acquire::Languages=none
     -o APT::Install-Recommends=false)
  log "s390x root: apt-get update ($1, s390x)"
  apt-get "${o[@]}" update -qq >"$st/update.log" 2>&1 || { log "apt-get update for $1 s390x failed (log: $st/update.log)"; return 1; }
  log "s390x root: downloading ${PKGS[*]} and dependencies from $1"
  rm -f "$st/cache/archives/"*.deb
  apt-get "${o[@]}" install -y -qq --download-only "${PKGS[@]}" >"$st/download.log" 2>&1 || {
    log "$1 s390x: $(grep -c '404' "$st/download.log") package(s) listed but not served, e.g. $(grep -m1 -oE '[^/]+_s390x\.deb +404' "$st/download.log" || grep -m1 -E '^E:' "$st/download.log") (log: $st/download.log)"
    return 1
  }
}
RELEASES=${SMC_RUN_S390X_RELEASES:-trixie forky}
release=
for r in $RELEASES; do fetch "$r" && { release=$r; break; }; done
[ -n "$release" ] || die "no Debian release in '$RELEASES' serves every s390x package the guest root needs (logs above)"
debs=$(cd "$st/cache/archives" && ls -- *.deb 2>/dev/null || true)
[ -n "$debs" ] || die "apt resolved no packages for the s390x root"

rm -rf "$OUT.tmp"; mkdir -p "$OUT.tmp"
# merged /usr, as a trixie system has it (the loader is /lib/ld64.so.1)
for d in bin sbin lib; do mkdir -p "$OUT.tmp/usr/$d"; ln -s "usr/$d" "$OUT.tmp/$d"; done
for f in $debs; do
  [ -f "$st/cache/archives/$f" ] || die "s390x root: $f was not downloaded"
  dpkg-deb -x "$st/cache/archives/$f" "$OUT.tmp"
done
# what the guest's init mounts over, and a minimal user database
mkdir -p "$OUT.tmp"/{proc,sys,dev,tmp,run,var/tmp,var/log,root,etc}
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$OUT.tmp/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' > "$OUT.tmp/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$OUT.tmp/etc/hosts"
[ -x "$OUT.tmp/usr/bin/node" ] || ln -s nodejs "$OUT.tmp/usr/bin/node"
# /bin/sh (the launcher and child_process with a shell need it): dash's maintainer script makes it
[ -e "$OUT.tmp/usr/bin/sh" ] || ln -s dash "$OUT.tmp/usr/bin/sh"

# rolldown's native binding for s390x (loaded through NAPI_RS_NATIVE_LIBRARY_PATH in the guest)
tmp=$(mktemp -d)
(cd "$tmp" && npm pack "@rolldown/binding-linux-s390x-gnu@$ROLLDOWN" --silent >/dev/null 2>"$tmp/npm.log") ||
  die "npm pack @rolldown/binding-linux-s390x-gnu@$ROLLDOWN failed ($(tail -n1 "$tmp/npm.log"))"
mkdir -p "$OUT.tmp/opt/rolldown"
tar -xzf "$tmp"/*.tgz -C "$OUT.tmp/opt/rolldown" --strip-components=1
rm -rf "$tmp"
ls "$OUT.tmp"/opt/rolldown/*.node >/dev/null || die "@rolldown/binding-linux-s390x-gnu has no .node file"

{ echo "release $release"; printf '%s\n' $debs; } > "$OUT.tmp/.complete"
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
log "s390x root: Debian $release, $(( $(wc -l < "$OUT/.complete") - 1 )) packages, $(du -sm "$OUT" | cut -f1) MiB, node $(grep -m1 '^nodejs_' "$OUT/.complete")"
echo "$OUT"
