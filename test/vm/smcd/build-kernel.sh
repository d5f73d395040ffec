#!/usr/bin/env bash
# Build (once) a small, module-free 6.12 kernel with SMC + SMC_DIAG + loopback-ism (SMC_LO) from
# Debian trixie's linux-source-6.12, for the SMC-D guest. Prints the cached bzImage path on stdout.
#   build-kernel.sh [--arch x86_64|s390x]
# x86_64 (default): test/vm/smcd/config.fragment, cached under $XDG_CACHE_HOME/smc-run/kernel-smcd-<hash
# of fragment and this script>; about 5 minutes on 2 cores.
# s390x: test/vm/s390x/config.fragment, cross-compiled with Debian's gcc-s390x-linux-gnu (ARCH=s390),
# cached under kernel-s390x-<hash>. The source tree is deleted after the build.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
ARCH=x86_64
case ${1:-} in
  --arch) ARCH=${2:-} ;;
  --arch=*) ARCH=${1#*=} ;;
  "") ;;
  *) die "usage: build-kernel.sh [--arch x86_64|s390x]" ;;
esac
case $ARCH in
  # ARCH=x86_64 matters: with ARCH=x86 allnoconfig would turn 64BIT off.
  x86_64) FRAGMENT=$HERE/config.fragment NAME=smcd KMAKE=(ARCH=x86_64) IMAGE=arch/x86/boot/bzImage TOOLS=(gcc) ;;
  s390x) FRAGMENT=$HERE/../s390x/config.fragment NAME=s390x IMAGE=arch/s390/boot/bzImage TOOLS=(gcc gcc-s390x-linux-gnu)
    KMAKE=(ARCH=s390 CROSS_COMPILE=s390x-linux-gnu-) ;;
  *) die "--arch: unknown architecture $ARCH (x86_64, s390x)" ;;
esac
KEY=$(cat "$FRAGMENT" "$0" | sha256sum | cut -c1-16)
OUT=$CACHE_ROOT/kernel-$NAME-$KEY
if [ -s "$OUT/bzImage" ]; then echo "$OUT/bzImage"; exit 0; fi

apt_need "${TOOLS[@]}" make bc bison flex libelf-dev libssl-dev xz-utils
mkdir -p "$CACHE_ROOT"
WORK=$(mktemp -d "$CACHE_ROOT/build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
log "downloading linux-source-6.12 from trixie"
(cd "$WORK" && trixie_apt download -qq linux-source-6.12 >/dev/null)
deb=$(ls "$WORK"/linux-source-6.12_*_all.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK" --wildcards '*/linux-source-6.12.tar.xz'
rm -f "$deb"
tar -C "$WORK" -xJf "$WORK"/usr/src/linux-source-6.12.tar.xz
rm -rf "$WORK/usr"
SRC=$WORK/linux-source-6.12 B=$WORK/build
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
