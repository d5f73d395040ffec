#!/usr/bin/env bash
# Prebuilt N-API addons for the npm tarball: prebuilds/linux-<arch>/smc_run.glibc.node, stripped, and
# beside each the launcher's LD_PRELOAD library smc-preload.so (native/preload/build.sh, same compiler),
# and the BPF switch's loader smc-bpf (native/bpf/build.sh; it links libbpf statically: for a foreign
# architecture with Debian's libbpf-dev, libelf-dev and zlib1g-dev for it, unpacked by arch_bpf_sysroot;
# s390x's loader embeds the big-endian objects).
#
# usage:  npm run build:prebuilds                  # linux-x64, linux-arm64, linux-s390x
#         bash scripts/build-prebuilds.sh s390x     # one or more of: x64 arm64 s390x
#         SMC_RUN_PREBUILD_FORCE=1 ...              # rebuild even when sources are unchanged
#
# x64 is built with the host compiler; arm64 and s390x with Debian's cross compilers
# (g++-aarch64-linux-gnu, g++-s390x-linux-gnu; apt-get installs them when missing and running as root).
# N-API headers come from the local Node installation (node-gyp --nodedir, no header download). Each
# build runs in a temporary copy of binding.gyp + native/, so the contributor's build/Release stays the
# host's. A build is skipped when binding.gyp, native/ and node-addon-api are unchanged since the last one
# (stamp in build/prebuild-<arch>.stamp). npm pack runs this (prepack).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/arch-lib.sh

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x64 arm64 s390x)

nodedir=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
[ -f "$nodedir/include/node/node_api.h" ] ||
  arch_die "no N-API headers in the local Node installation ($nodedir/include/node/node_api.h)"
host=$(node -p process.arch)
mkdir -p build "$ARCH_CACHE_ROOT"
sources_hash=$({ find native -type f | LC_ALL=C sort | xargs cat binding.gyp scripts/build-prebuilds.sh; node -p 'require("node-addon-api/package.json").version'; } | sha256sum | cut -c1-16)

for arch in "${archs[@]}"; do
  arch_vars "$arch"
  out=prebuilds/linux-$ARCH_NODE_ARCH
  stamp=build/prebuild-$ARCH_NODE_ARCH.stamp
  if [ -z "${SMC_RUN_PREBUILD_FORCE:-}" ] && [ -f "$out/smc_run.glibc.node" ] && [ -f "$out/smc-preload.so" ] &&
     { [ -f "$out/smc-bpf" ] || ! command -v clang >/dev/null; } &&
     [ "$(cat "$stamp" 2>/dev/null)" = "$sources_hash" ]; then
    echo "prebuild $out: up to date"
    continue
  fi
  if [ "$ARCH_NODE_ARCH" = "$host" ]; then
    cxx=${CXX_FOR_PREBUILD:-g++} cc=${CC_FOR_PREBUILD:-gcc} strip_bin=strip
    command -v "$cxx" >/dev/null || arch_die "no C++ compiler ($cxx) for the $host prebuild"
  else
    arch_apt_install "g++-$ARCH_TRIPLE" "binutils-$ARCH_TRIPLE"
    cxx=$ARCH_TRIPLE-g++ cc=$ARCH_TRIPLE-gcc strip_bin=$ARCH_TRIPLE-strip
  fi
  work=$(mktemp -d)
  cp -r binding.gyp native "$work/"
  ln -s "$root/node_modules" "$work/node_modules"
  start=$(date +%s)
  # --tag-libc: the file says glibc, so node-gyp-build does not pick it on musl
  (cd "$work" && CC=$cc CXX=$cxx LINK=$cxx npm_config_nodedir=$nodedir \
    node "$root/node_modules/prebuildify/bin.js" --napi --strip --strip-bin "$strip_bin" --tag-libc \
    --name smc_run --arch "$ARCH_NODE_ARCH" --platform linux --quiet) ||
    { rm -rf "$work"; arch_die "prebuild for linux-$ARCH_NODE_ARCH failed"; }
  rm -rf "$out"
  mkdir -p prebuilds
  cp -r "$work/prebuilds/linux-$ARCH_NODE_ARCH" "$out"
  rm -rf "$work"
  sh native/preload/build.sh "$out/smc-preload.so" "$cc" && "$strip_bin" "$out/smc-preload.so" ||
    arch_die "LD_PRELOAD library for linux-$ARCH_NODE_ARCH failed"
  bpf_sysroot=
  if [ "$ARCH_NODE_ARCH" != "$host" ]; then arch_bpf_sysroot "$ARCH_NODE_ARCH"; bpf_sysroot=$ARCH_BPF_SYSROOT; fi
  SMC_RUN_BPF_SYSROOT=$bpf_sysroot sh native/bpf/build.sh "$out/smc-bpf" "$cc" "$ARCH_TRIPLE" &&
    { [ ! -f "$out/smc-bpf" ] || "$strip_bin" "$out/smc-bpf"; } ||
    arch_die "BPF switch loader for linux-$ARCH_NODE_ARCH failed"
  echo "$sources_hash" >"$stamp"
  f=$(ls "$out"/*.node)
  echo "prebuild $f: $(stat -c %s "$f") bytes, $(( $(date +%s) - start )) s"
done
