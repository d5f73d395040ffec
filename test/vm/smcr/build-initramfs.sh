#!/usr/bin/env bash
# Build (once) what the SMC-R guests boot: Debian trixie's stock 6.12 kernel (it has SMC=m, SMC_DIAG=m and
# RDMA_RXE=m, so no kernel build is needed, unlike the SMC-D guest which needs SMC_LO built in) and a small
# busybox initramfs holding just the modules the guests need, decompressed, in a depmod-ed tree.
# Prints the cache directory on stdout; it holds:
#   vmlinux            the uncompressed kernel (booted through its PVH entry: under TCG this saves the
#                      in-guest zstd decompression of the bzImage: measured 22-27 s against 30-32 s
#                      for a whole trivial pair run on a loaded 2-core host)
#   vmlinuz            Debian's bzImage (fallback if vmlinux could not be extracted)
#   initramfs.cpio.gz  busybox + lib/modules/<kver> (only the needed modules) + /init (initramfs-init)
#   config, kver, modules.load (the insmod order), kernel-package (the .deb it came from)
# Cached under $XDG_CACHE_HOME/smc-run/kernel-smcr-<hash of this script and initramfs-init>. The kernel
# version is resolved when the cache is built (the newest trixie 6.12 image then) and is NOT part of the key:
# a cached build keeps working offline and when the mirror moves on; delete the directory to refresh it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
INIT=$HERE/initramfs-init
KEY=$(cat "$HERE/build-initramfs.sh" "$INIT" | sha256sum | cut -c1-16)
OUT=$CACHE_ROOT/kernel-smcr-$KEY
if [ -s "$OUT/initramfs.cpio.gz" ] && { [ -s "$OUT/vmlinux" ] || [ -s "$OUT/vmlinuz" ]; }; then echo "$OUT"; exit 0; fi

# Top-level modules; their dependencies come from modprobe --show-depends. Why each one:
#  9pnet_virtio 9p: the host root, the repo and the run dir are 9p shares; virtio_net: the guests' link;
#  smc smc_diag: AF_SMC and the sock_diag view that getSmcInfo / `stats sockets` read;
#  crc32_generic: rdma_rxe asks for the "crc32" crypto algorithm at `rdma link add` time and fails
#  ("rxe_newlink: failed to add eth0") without it, and nothing else pulls it in;
#  rdma_rxe: SoftRoCE, the RDMA device SMC-R runs on; veth: network-namespace (container) scenarios;
#  virtio_rng: entropy, so nothing in the guest blocks on getrandom().
MODS="9pnet_virtio 9p virtio_net smc smc_diag crc32_generic rdma_rxe veth virtio_rng"

# kmod: depmod/modprobe on the host; xz-utils: Debian ships .ko.xz; busybox-static: the initramfs userland
# (static, so no libraries to copy); cpio/gzip: the archive.
apt_need busybox-static kmod cpio gzip xz-utils zstd
mkdir -p "$CACHE_ROOT"
WORK=$(mktemp -d "$CACHE_ROOT/build-smcr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# apt-cache against the same private trixie state as trixie_apt (lib.sh), which only wraps apt-get. The
# binary caches are switched off so the system's /var/cache/apt/*.bin are neither read nor rewritten.
trixie_cache() {
  local st=$CACHE_ROOT/apt-trixie
  apt-cache -o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$st/lists" \
    -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= "$@"
}
# Any trixie_apt call refreshes the private lists when missing or older than a week; --print-uris makes
# this one a no-op otherwise.
trixie_apt -qq --print-uris download busybox-static >/dev/null
# Newest available stock 6.12 image, resolved now: point releases replace the ABI name (6.12.N+deb13),
# so no exact name is pinned here.
KPKG=$(trixie_cache pkgnames linux-image-6.12 | grep -E '^linux-image-6\.12\.[0-9]+\+deb13-amd64-unsigned$' | sort -V | tail -n1 || true)
[ -n "$KPKG" ] || die "no linux-image-6.12.*+deb13-amd64-unsigned in trixie (mirror $MIRROR)"
KV=${KPKG#linux-image-}; KV=${KV%-unsigned}
log "downloading $KPKG from trixie"
(cd "$WORK" && trixie_apt download -qq "$KPKG" >/dev/null)
mkdir "$WORK/root"
dpkg-deb -x "$WORK/${KPKG}"_*.deb "$WORK/root"
rm -f "$WORK/${KPKG}"_*.deb
MODDIR=$WORK/root/usr/lib/modules/$KV
[ -d "$MODDIR" ] || MODDIR=$WORK/root/lib/modules/$KV
[ -d "$MODDIR" ] || die "$KPKG has no modules directory for $KV"
# the .deb ships no modules.dep (its postinst runs depmod); modprobe -d needs <dir>/lib/modules/<kver>
mkdir -p "$WORK/mods/lib/modules"
mv "$MODDIR" "$WORK/mods/lib/modules/$KV"
depmod -b "$WORK/mods" "$KV"

# The insmod order: each top-level module's dependency chain, first occurrence wins.
ORDER=$WORK/modules.load
: > "$ORDER"
for m in $MODS; do
  deps=$(modprobe -d "$WORK/mods" -S "$KV" --show-depends "$m") || die "modprobe --show-depends $m failed"
  while read -r f; do
    rel=${f#"$WORK/mods/lib/modules/$KV/"}
    grep -qxF "$rel" "$ORDER" || echo "$rel" >> "$ORDER"
  done < <(awk '$1 == "insmod" { print $2 }' <<<"$deps")
done
[ -s "$ORDER" ] || die "no modules resolved"
log "module load order: $(sed 's#.*/##; s#\.ko.*##' "$ORDER" | tr '\n' ' ')"

# The initramfs: busybox, the modules decompressed (busybox insmod hands the file to init_module(), which
# takes no compressed images) at their usual paths, a depmod run over just them (so modprobe works there
# too), the insmod order as lib/modules/<kver>/smc-run.load, and /init.
ST=$WORK/initramfs
mkdir -p "$ST"/{bin,dev,proc,sys,newroot,lib/modules/"$KV"}
cp /bin/busybox "$ST/bin/busybox"
for a in sh mount mkdir insmod modprobe switch_root cat echo sleep uname poweroff; do ln -s busybox "$ST/bin/$a"; done
: > "$ST/lib/modules/$KV/smc-run.load"
while read -r rel; do
  src=$WORK/mods/lib/modules/$KV/$rel
  dst=$ST/lib/modules/$KV/${rel%.xz}; dst=${dst%.zst}
  mkdir -p "$(dirname "$dst")"
  case $rel in
    *.xz) xz -dc "$src" > "$dst" ;;
    *.zst) zstd -dcq "$src" > "$dst" ;;
    *) cp "$src" "$dst" ;;
  esac
  echo "${dst#"$ST/lib/modules/$KV/"}" >> "$ST/lib/modules/$KV/smc-run.load"
done < "$ORDER"
# modules.builtin*: so modprobe there knows what is built in; modules.order: our load order
cp "$WORK/mods/lib/modules/$KV"/modules.builtin{,.modinfo} "$ST/lib/modules/$KV/"
cp "$ST/lib/modules/$KV/smc-run.load" "$ST/lib/modules/$KV/modules.order"
depmod -b "$ST" "$KV"
cp "$INIT" "$ST/init"
chmod 755 "$ST/init"

mkdir "$WORK/out"
(cd "$ST" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$WORK/out/initramfs.cpio.gz"
cp "$WORK/root/boot/vmlinuz-$KV" "$WORK/out/vmlinuz"
cp "$WORK/root/boot/config-$KV" "$WORK/out/config"
cp "$ORDER" "$WORK/out/modules.load"
echo "$KV" > "$WORK/out/kver"
echo "$KPKG" > "$WORK/out/kernel-package"
# vmlinux: Debian's bzImage payload is one zstd frame; decompress from its magic (28 b5 2f fd) on. zstd
# stops with an error at the bytes after the frame (the size trailer), so the result is judged by the ELF
# magic instead of the exit code. Without it the guests boot the bzImage, only a little slower.
off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$WORK/out/vmlinuz" | head -n1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
  tail -c +"$((off + 1))" "$WORK/out/vmlinuz" | zstd -dcq > "$WORK/out/vmlinux" 2>/dev/null || true
  if [ "$(head -c4 "$WORK/out/vmlinux" | od -An -tx1 | tr -d ' \n')" != 7f454c46 ]; then
    log "could not extract vmlinux; the guests will boot the bzImage"; rm -f "$WORK/out/vmlinux"
  fi
fi
log "kernel $KV, initramfs $(du -h "$WORK/out/initramfs.cpio.gz" | cut -f1), $(wc -l < "$ORDER") modules"
# publish atomically: a concurrent run either sees the whole directory or none
rm -rf "$OUT"; mv "$WORK/out" "$OUT"
echo "$OUT"
