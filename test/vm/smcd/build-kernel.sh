#!/usr/bin/env bash
# Build (once) a small, module-free kernel with SMC + SMC_DIAG + loopback-ism from a Debian
# linux-source package (allnoconfig + a config fragment), for the SMC-D guest. Prints the cached bzImage
# path on stdout. The source tree is deleted after the build.
#   build-kernel.sh [--arch x86_64|s390x] [--series X.Y|newest] [--suite SUITE] [--fragment FILE]
# x86_64 (default): Debian trixie's linux-source-6.12 with test/vm/smcd/config.fragment, cached under
# $XDG_CACHE_HOME/smc-run/kernel-smcd-<hash of fragment and this script>; about 5 minutes on 2 cores.
# --series/--suite/--fragment pick another source package and fragment, e.g. the newest kernel Debian
# serves: --series newest --suite trixie-backports --fragment config-7.x.fragment ("newest" is the highest
# linux-source-X.Y in SUITE, looked up in a private apt state at build time); cached under
# kernel-smcd-<series>-<hash>. A relative --fragment is looked up next to this script.
# s390x: test/vm/s390x/config.fragment, cross-compiled with Debian's gcc-s390x-linux-gnu (ARCH=s390),
# cached under kernel-s390x-<hash>.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
ARCH=x86_64 SERIES=6.12 SUITE=trixie FRAG=
usage="usage: build-kernel.sh [--arch x86_64|s390x] [--series X.Y|newest] [--suite SUITE] [--fragment FILE]"
while [ $# -gt 0 ]; do
  case $1 in
    --arch|--series|--suite|--fragment) [ $# -ge 2 ] || die "$usage"; v=$2; o=$1; shift 2 ;;
    --arch=*|--series=*|--suite=*|--fragment=*) v=${1#*=}; o=${1%%=*}; shift ;;
    *) die "$usage" ;;
  esac
  case $o in --arch) ARCH=$v ;; --series) SERIES=$v ;; --suite) SUITE=$v ;; --fragment) FRAG=$v ;; esac
done
case $ARCH in
  # ARCH=x86_64 matters: with ARCH=x86 allnoconfig would turn 64BIT off.
  x86_64) FRAGMENT=$HERE/config.fragment NAME=smcd KMAKE=(ARCH=x86_64) IMAGE=arch/x86/boot/bzImage TOOLS=(gcc) ;;
  s390x) FRAGMENT=$HERE/../s390x/config.fragment NAME=s390x IMAGE=arch/s390/boot/bzImage TOOLS=(gcc gcc-s390x-linux-gnu)
    KMAKE=(ARCH=s390 CROSS_COMPILE=s390x-linux-gnu-) ;;
  *) die "--arch: unknown architecture $ARCH (x86_64, s390x)" ;;
esac
if [ -n "$FRAG" ]; then
  case $FRAG in /*) FRAGMENT=$FRAG ;; *) [ -e "$FRAG" ] && FRAGMENT=$(readlink -f "$FRAG") || FRAGMENT=$HERE/$FRAG ;; esac
  [ -r "$FRAGMENT" ] || die "--fragment: no file $FRAG"
fi
if [ "$SERIES" = newest ]; then
  # the highest linux-source-X.Y in SUITE's package index (refreshed weekly by debian_apt)
  debian_apt "$SUITE" check -qq >/dev/null
  SERIES=$(for f in "$CACHE_ROOT/apt-$SUITE/lists/"*_Packages*; do /usr/lib/apt/apt-helper cat-file "$f"; done |
    sed -n 's/^Package: linux-source-\([0-9][0-9.]*\)$/\1/p' | sort -V | tail -n1)
  [ -n "$SERIES" ] || die "no linux-source-X.Y package in Debian $SUITE"
  log "newest linux-source in $SUITE: $SERIES"
fi
# cache key: fragment and this script (the 6.12 default as before), plus series and suite for the others
if [ "$SERIES/$SUITE" = 6.12/trixie ]; then
  KEY=$(cat "$FRAGMENT" "$0" | sha256sum | cut -c1-16)
else
  KEY=$( (cat "$FRAGMENT" "$0"; echo "$SERIES $SUITE") | sha256sum | cut -c1-16)
  NAME=$NAME-$SERIES
fi
OUT=$CACHE_ROOT/kernel-$NAME-$KEY
if [ -s "$OUT/bzImage" ]; then echo "$OUT/bzImage"; exit 0; fi
# One build per kernel at a time: .ci/run builds the lanes' kernels in the background (test/vm/kernels.sh)
# while a lane may ask for the same one; the second caller waits for the first and takes its result.
mkdir -p "$CACHE_ROOT"
exec 9>"$OUT.lock"
if ! flock -n 9; then
  log "kernel-$NAME-$KEY is being built by another process; waiting for it"
  flock 9
fi
if [ -s "$OUT/bzImage" ]; then echo "$OUT/bzImage"; exit 0; fi

# pahole encodes BTF; Kconfig reads its version, so it must be there before the configuration
grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$FRAGMENT" && TOOLS+=(dwarves)
apt_need "${TOOLS[@]}" make bc bison flex libelf-dev libssl-dev xz-utils
WORK=$(mktemp -d "$CACHE_ROOT/build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
log "downloading linux-source-$SERIES from $SUITE"
(cd "$WORK" && debian_apt "$SUITE" download -qq "linux-source-$SERIES" >/dev/null)
deb=$(ls "$WORK"/linux-source-"$SERIES"_*_all.deb)
log "source package ${deb##*/}"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK" --wildcards "*/linux-source-$SERIES.tar.xz"
rm -f "$deb"
tar -C "$WORK" -xJf "$WORK/usr/src/linux-source-$SERIES.tar.xz"
rm -rf "$WORK/usr"
SRC=$WORK/linux-source-$SERIES B=$WORK/build
make -s -C "$SRC" O="$B" "${KMAKE[@]}" KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig
bad=0
while IFS= read -r l; do
  case $l in
    CONFIG_*=*) grep -qxF "$l" "$B/.config" || { log "config: wanted $l"; bad=1; } ;;
    "# CONFIG_"*" is not set") s=${l#\# }; s=${s%% *}; ! grep -q "^$s=" "$B/.config" || { log "config: wanted $s off"; bad=1; } ;;
  esac
done < "$FRAGMENT"
[ $bad = 0 ] || die "config fragment not fully applied"
log "make $ARCH -j$(nproc) bzImage (about 5 minutes)"
t0=$(date +%s)
make -s -C "$SRC" O="$B" "${KMAKE[@]}" -j"$(nproc)" bzImage >&2
log "built $ARCH $(make -s -C "$SRC" O="$B" "${KMAKE[@]}" kernelrelease) in $(( $(date +%s) - t0 )) s"
mkdir -p "$OUT.tmp"
cp "$B/$IMAGE" "$B/.config" "$OUT.tmp/"
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
echo "$OUT/bzImage"
