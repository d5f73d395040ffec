#!/usr/bin/env bash
# Build (once) what the SMC-R guests boot: a Debian release's stock kernel (it has SMC=m, SMC_DIAG=m and
# RDMA_RXE=m, so no kernel build is needed, unlike the SMC-D guest which needs SMC_LO built in) and a small
# busybox initramfs holding just the modules the guests need, decompressed, in a depmod-ed tree.
# usage: build-initramfs.sh [--release trixie|bookworm]   (default: $SMC_RUN_SMCR_RELEASE, else trixie)
#   trixie:   Debian 13's stock 6.12 (linux-image-6.12.N+deb13-amd64-unsigned)
#   bookworm: Debian 12's stock 6.1 (linux-image-6.1.0-N-amd64-unsigned)
# Prints the cache directory on stdout; it holds:
#   vmlinux            the uncompressed kernel (booted through its PVH entry: under TCG this saves the
#                      in-guest zstd decompression of the bzImage: measured 22-27 s against 30-32 s
#                      for a whole trivial pair run on a loaded 2-core host)
#   vmlinuz            Debian's bzImage (fallback if vmlinux could not be extracted)
#   initramfs.cpio.gz  busybox + lib/modules/<kver> (only the needed modules) + /init (initramfs-init)
#   config, kver, modules.load (the insmod order), kernel-package (the .deb it came from)
# Cached under $XDG_CACHE_HOME/smc-run/kernel-smcr-<release>-<hash of this script, initramfs-init and the
# release>. The kernel version is resolved when the cache is built (the newest image of the release's series
# then) and is NOT part of the key: a cached build keeps working offline and when the mirror moves on; delete
# the directory to refresh it. Packages come from a private apt state per release (lib.sh debian_apt): the
# host's own apt state and installed packages are untouched, whatever release the host runs.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
REL=${SMC_RUN_SMCR_RELEASE:-trixie}
case ${1:-} in
  --release) REL=${2:?--release needs a value}; shift 2 ;;
  --release=*) REL=${1#*=}; shift ;;
esac
[ $# = 0 ] || die "usage: build-initramfs.sh [--release trixie|bookworm]"
# the kernel image packages of each release: point releases replace the ABI name (6.12.N+deb13, 6.1.0-N),
# so no exact name is pinned here; the newest one the mirror serves is taken
case $REL in
  trixie) KPAT='^linux-image-6\.12\.[0-9]+\+deb13-amd64-unsigned$' ;;
  bookworm) KPAT='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
  *) die "unknown release $REL (trixie or bookworm)" ;;
esac
INIT=$HERE/initramfs-init
KEY=$( (cat "$HERE/build-initramfs.sh" "$INIT"; echo "$REL") | sha256sum | cut -c1-16)
OUT=$CACHE_ROOT/kernel-smcr-$REL-$KEY
if [ -s "$OUT/initramfs.cpio.gz" ] && { [ -s "$OUT/vmlinux" ] || [ -s "$OUT/vmlinuz" ]; }; then echo "$OUT"; exit 0; fi

# Top-level modules; their dependencies come from modprobe --show-depends. Why each one:
#  virtio_pci: the virtio devices' bus driver (built into trixie's kernel, a module in bookworm's: without
#  it 9p finds "no channels available"); 9pnet_virtio 9p: the host root, the repo and the run dir are 9p shares; virtio_net: the guests' link;
#  smc smc_diag: AF_SMC and the sock_diag view that getSmcInfo / `stats sockets` read;
#  tcp_diag: the TCP sock_diag dump that gives IPPROTO_SMC sockets (the BPF switch's) their addresses;
#  crc32_generic: rdma_rxe asks for the "crc32" crypto algorithm at `rdma link add` time and fails
#  ("rxe_newlink: failed to add eth0") without it, and nothing else pulls it in;
#  rdma_rxe: SoftRoCE, the RDMA device SMC-R runs on; veth: network-namespace (container) scenarios;
#  virtio_rng: entropy, so nothing in the guest blocks on getrandom().
MODS="virtio_pci 9pnet_virtio 9p virtio_net smc smc_diag tcp_diag crc32_generic rdma_rxe veth virtio_rng"

# kmod: depmod/modprobe on the host; xz-utils: Debian ships .ko.xz; busybox-static: the initramfs userland
# (static, so no libraries to copy); cpio/gzip: the archive.
apt_need busybox-static kmod cpio gzip xz-utils zstd
mkdir -p "$CACHE_ROOT"
WORK=$(mktemp -d "$CACHE_ROOT/build-smcr-$REL.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# apt-cache against the same private state as debian_apt (lib.sh), which only wraps apt-get. The binary
# caches are switched off so the system's /var/cache/apt/*.bin are neither read nor rewritten.
rel_cache() {
  local st=$CACHE_ROOT/apt-$REL
  apt-cache -o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$st/lists" \
    -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= "$@"
}
# Any debian_apt call refreshes the private lists when missing or older than a week; --print-uris makes
# this one a no-op otherwise.
debian_apt "$REL" -qq --print-uris download busybox-static >/dev/null
KPKG=$(rel_cache pkgnames linux-image- | grep -E "$KPAT" | sort -V | tail -n1 || true)
[ -n "$KPKG" ] || die "no kernel image matching $KPAT in $REL (mirror $MIRROR)"
KV=${KPKG#linux-image-}; KV=${KV%-unsigned}
log "downloading $KPKG from $REL"
(cd "$WORK" && debian_apt "$REL" download -qq "$KPKG" >/dev/null)
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
# vmlinux: Debian's bzImage payload is one zstd frame (trixie) or xz stream (bookworm); decompress from its
# magic (28 b5 2f fd / fd 37 7a 58 5a 00) on. The decompressor may stop with an error at the bytes after
# the frame (the size trailer), so the result is judged by the ELF magic instead of the exit code. Without
# it the guests boot the bzImage, only a little slower.
elf() { [ "$(head -c4 "$WORK/out/vmlinux" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }
off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$WORK/out/vmlinuz" | head -n1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
  tail -c +"$((off + 1))" "$WORK/out/vmlinuz" | zstd -dcq > "$WORK/out/vmlinux" 2>/dev/null || true
fi
if ! elf; then
  off=$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' "$WORK/out/vmlinuz" | head -n1 | cut -d: -f1 || true)
  if [ -n "$off" ]; then
    tail -c +"$((off + 1))" "$WORK/out/vmlinuz" | xz -dcq --single-stream > "$WORK/out/vmlinux" 2>/dev/null || true
  fi
fi
elf || { log "could not extract vmlinux; the guests will boot the bzImage"; rm -f "$WORK/out/vmlinux"; }
log "kernel $KV, initramfs $(du -h "$WORK/out/initramfs.cpio.gz" | cut -f1), $(wc -l < "$ORDER") modules"
# publish atomically: a concurrent run either sees the whole directory or none
rm -rf "$OUT"; mv "$WORK/out" "$OUT"
echo "$OUT"
