#!/bin/sh
# Builds the BPF switch of `smc-run enable` (native/bpf/smc-switch.bpf.c), its destination policy
# (native/bpf/smc-policy.bpf.c) and their loader (native/bpf/smc-bpf.c):
# clang compiles the programs for the target's byte order (bpfel; bpfeb for s390x) with BTF for CO-RE,
# the loader embeds the objects as they are (.incbin) and links libbpf, libelf and zlib statically (the
# machine that runs it needs neither clang nor libbpf). Needs clang and libbpf-dev (for TRIPLE).
# usage: sh native/bpf/build.sh OUT [CC] [TRIPLE]   (npm run build: build/Release/smc-bpf, host gcc;
#        scripts/build-prebuilds.sh: prebuilds/linux-<arch>/smc-bpf)
# SMC_RUN_BPF_SYSROOT=DIR: libbpf, libelf and zlib for TRIPLE under DIR/usr (a cross build:
# scripts/build-prebuilds.sh unpacks Debian's packages for the arch there); default: the system's.
# npm run build calls it with OUT only: without the tools it says so in one line and builds nothing (the
# BPF switch then reports itself missing), unless SMC_RUN_REQUIRE_BPF=1 (CI), where that is a failure.
set -eu
cd "$(dirname "$0")/../.."
out=$1 cc=${2:-${CC:-gcc}} triple=${3:-$(${2:-${CC:-gcc}} -dumpmachine)}
srcs="native/bpf/cgroup-scope.bpf.h native/bpf/smc-switch.bpf.c native/bpf/smc-policy.bpf.c native/bpf/smc-bpf.c native/bpf/build.sh"
if [ -z "${2:-}" ] && [ -f "$out" ]; then
  fresh=1
  for f in $srcs; do [ "$out" -nt "$f" ] || fresh=; done
  [ -z "$fresh" ] || exit 0
fi
missing=
command -v clang >/dev/null || missing="$missing clang"
sysroot=${SMC_RUN_BPF_SYSROOT:-}
[ -f "$sysroot/usr/lib/$triple/libbpf.a" ] || missing="$missing libbpf-dev${3:+:$triple}"
if [ -n "$missing" ]; then
  echo "smc-run: the BPF switch (smc-run enable) was not built: missing$missing (Debian: apt-get install clang libbpf-dev)" >&2
  [ "${SMC_RUN_REQUIRE_BPF:-}" != 1 ] || exit 1
  exit 0
fi
case $triple in s390x-*) target=bpfeb ;; *) target=bpfel ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# -I for <asm/types.h> under <linux/types.h>: the integer types are the same on every Linux target
# two objects: the switch (6.11+) and the destination policy (smc_hs_ctrl, 6.19+), loaded only where the
# kernel has that struct_ops type
for prog in switch policy; do
  clang -O2 -g -target $target -Wall -Werror -I"/usr/include/$triple" -I/usr/include/x86_64-linux-gnu \
    -c "native/bpf/smc-$prog.bpf.c" -o "$work/smc-$prog.bpf.o"
done
mkdir -p "$(dirname "$out")"
libs=
[ -z "$sysroot" ] || libs="-I$sysroot/usr/include -L$sysroot/usr/lib/$triple"
# shellcheck disable=SC2086
$cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wa,-I"$work" $libs -o "$out.tmp" native/bpf/smc-bpf.c \
  -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -Wl,-z,relro,-z,now
mv "$out.tmp" "$out"
