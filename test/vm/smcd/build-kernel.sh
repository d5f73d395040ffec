#!/usr/bin/env bash
# Build (once) a small, module-free 6.12 kernel with SMC + SMC_DIAG + loopback-ism (SMC_LO) from
# Debian trixie's linux-source-6.12, for the SMC-D guest. Prints the cached bzImage path on stdout.
# Cached under $XDG_CACHE_HOME/smc-run/kernel-smcd-<hash of fragment and this script>; the source
# tree is deleted after the build. About 5 minutes on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
FRAGMENT=$HERE/config.fragment
KEY=$(cat "$FRAGMENT" "$0" | sha256sum | cut -c1-16)
OUT=$CACHE_ROOT/kernel-smcd-$KEY
if [ -s "$OUT/bzImage" ]; then echo "$OUT/bzImage"; exit 0; fi

apt_need gcc make bc bison flex libelf-dev libssl-dev xz-utils
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
# ARCH=x86_64 matters: with ARCH=x86 allnoconfig would turn 64BIT off.
make -s -C "$SRC" O="$B" ARCH=x86_64 KCONFIG_ALLCONFIG="$FRAGMENT" allnoconfig
bad=0
while IFS= read -r l; do
  case $l in
    CONFIG_*=*) grep -qxF "$l" "$B/.config" || { log "config: wanted $l"; bad=1; } ;;
    "# CONFIG_"*" is not set") s=${l#\# }; s=${s%% *}; ! grep -q "^$s=" "$B/.config" || { log "config: wanted $s off"; bad=1; } ;;
  esac
done < "$FRAGMENT"
[ $bad = 0 ] || die "config fragment not fully applied"
log "make -j$(nproc) bzImage (about 5 minutes)"
t0=$(date +%s)
make -s -C "$SRC" O="$B" ARCH=x86_64 -j"$(nproc)" bzImage >&2
log "built $(make -s -C "$SRC" O="$B" ARCH=x86_64 kernelrelease) in $(( $(date +%s) - t0 )) s"
mkdir -p "$OUT.tmp"
cp "$B/arch/x86/boot/bzImage" "$B/.config" "$OUT.tmp/"
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
echo "$OUT/bzImage"
