# shellcheck shell=bash
# Foreign-architecture helpers (sourced, not run): Node for arm64/s390x, a Debian sysroot, qemu-user.
#
# usage:   . scripts/arch-lib.sh
#          arch_setup s390x        # sets ARCH_NODE (the s390x node binary), ARCH_SYSROOT, ARCH_TRIPLE, ...
#          arch_binfmt s390x       # registers qemu-user for s390x ELF files (needed for child processes)
#          QEMU_LD_PREFIX=$ARCH_SYSROOT "$ARCH_NODE" -p 'os.endianness()'   # -> BE
# or as a command:  bash scripts/arch-lib.sh s390x   # prints ARCH_NODE=..., ARCH_SYSROOT=... (shell syntax)
#
# Everything is cached under ${XDG_CACHE_HOME:-~/.cache}/smc-run/arch/<arch>/:
#   node-<version>/bin/node   Node for that arch from the npm registry (node-linux-<arch>; newest 20.x,
#                             override with SMC_RUN_ARCH_NODE_VERSION)
#   sysroot/                  libc6, libstdc++6, libgcc-s1 for that arch, unpacked from the Debian packages
#                             that the system's apt sources serve today (a private apt state under apt/)
#   bpf-sysroot/              libbpf-dev, libelf-dev, zlib1g-dev for that arch, the same way (the BPF
#                             switch's loader links them statically: scripts/build-prebuilds.sh)
# Debian packages needed on the host (installed with apt-get when missing, as root): qemu-user-static,
# g++-<triple> (for the prebuilds: scripts/build-prebuilds.sh).

ARCH_CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/smc-run/arch

arch_die() { echo "arch: $*" >&2; exit 1; }

# arch_vars ARCH: Debian arch, GNU triple, qemu name, Node's process.arch
arch_vars() {
  case "$1" in
    arm64 | aarch64) ARCH_NODE_ARCH=arm64 ARCH_DEB=arm64 ARCH_TRIPLE=aarch64-linux-gnu ARCH_QEMU=aarch64 ;;
    s390x) ARCH_NODE_ARCH=s390x ARCH_DEB=s390x ARCH_TRIPLE=s390x-linux-gnu ARCH_QEMU=s390x ;;
    x64 | amd64 | x86_64) ARCH_NODE_ARCH=x64 ARCH_DEB=amd64 ARCH_TRIPLE=x86_64-linux-gnu ARCH_QEMU= ;;
    *) echo "arch: unknown architecture '$1' (arm64, s390x, x64)" >&2; return 2 ;;
  esac
  ARCH_DIR=$ARCH_CACHE_ROOT/$ARCH_NODE_ARCH
}

# arch_apt_install PKG...: installs the Debian packages that are missing (one clear line on failure)
arch_apt_install() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || arch_die "missing Debian packages: ${missing[*]} (run: apt-get install ${missing[*]})"
  echo "arch: apt-get install ${missing[*]}" >&2
  # another apt-get (a CI step, an operator) may hold dpkg's lock: wait for it rather than fail
  local lock=(-o DPkg::Lock::Timeout=600)
  if ! DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y --no-install-recommends "${missing[@]}" >"$ARCH_CACHE_ROOT/apt-install.log" 2>&1; then
    apt-get "${lock[@]}" update >>"$ARCH_CACHE_ROOT/apt-install.log" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y --no-install-recommends "${missing[@]}" >>"$ARCH_CACHE_ROOT/apt-install.log" 2>&1 ||
      arch_die "apt-get install ${missing[*]} failed (log: $ARCH_CACHE_ROOT/apt-install.log)"
  fi
}

# arch_node ARCH: downloads Node for ARCH (npm registry package node-linux-ARCH) -> ARCH_NODE, ARCH_NODE_VERSION
arch_node() {
  arch_vars "$1" || return
  local ver=${SMC_RUN_ARCH_NODE_VERSION:-}
  if [ -z "$ver" ]; then
    # a cached version is reused without asking the registry (offline re-runs)
    ver=$(cat "$ARCH_DIR/node-version" 2>/dev/null || true)
  fi
  if [ -z "$ver" ]; then
    ver=$(npm view "node-linux-$ARCH_NODE_ARCH" versions --json 2>/dev/null |
      node -e 'const v=JSON.parse(require("fs").readFileSync(0,"utf8"));const n=(Array.isArray(v)?v:[v]).filter(x=>/^20\./.test(x));n.sort((a,b)=>{const p=s=>s.split(".").map(Number);const [x,y]=[p(a),p(b)];return x[1]-y[1]||x[2]-y[2]});process.stdout.write(n.pop()||"")') ||
      true
    [ -n "$ver" ] || arch_die "the npm registry has no Node 20.x for $ARCH_NODE_ARCH (package node-linux-$ARCH_NODE_ARCH)"
  fi
  local dir=$ARCH_DIR/node-$ver
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$ARCH_DIR"
    local tmp
    tmp=$(mktemp -d "$ARCH_DIR/.node.XXXXXX")
    (cd "$tmp" && npm pack "node-linux-$ARCH_NODE_ARCH@$ver" --silent >/dev/null 2>"$tmp/npm.log") ||
      { rm -rf "$tmp"; arch_die "npm pack node-linux-$ARCH_NODE_ARCH@$ver failed"; }
    tar -xzf "$tmp"/node-linux-*.tgz -C "$tmp"
    [ -f "$tmp/package/bin/node" ] || { rm -rf "$tmp"; arch_die "node-linux-$ARCH_NODE_ARCH@$ver has no bin/node"; }
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  echo "$ver" >"$ARCH_DIR/node-version"
  ARCH_NODE=$dir/bin/node
  ARCH_NODE_VERSION=$ver
}

# arch_sysroot ARCH: libc6, libstdc++6, libgcc-s1 for ARCH from the system's Debian sources -> ARCH_SYSROOT
arch_sysroot() {
  arch_vars "$1" || return
  ARCH_SYSROOT=$ARCH_DIR/sysroot
  arch_unpack_debs "$ARCH_SYSROOT" libc6 libstdc++6 libgcc-s1
}

# arch_bpf_sysroot ARCH: the static libraries the BPF switch's loader links (libbpf, libelf, zlib) and
# libbpf's headers, for ARCH -> ARCH_BPF_SYSROOT (native/bpf/build.sh reads it as SMC_RUN_BPF_SYSROOT)
arch_bpf_sysroot() {
  arch_vars "$1" || return
  ARCH_BPF_SYSROOT=$ARCH_DIR/bpf-sysroot
  arch_unpack_debs "$ARCH_BPF_SYSROOT" libbpf-dev libelf-dev zlib1g-dev
}

# arch_unpack_debs DIR PKG...: the packages for $ARCH_DEB (arch_vars) as the system's Debian sources serve
# them today, downloaded with a private apt state under $ARCH_DIR/apt and unpacked into DIR (kept until
# the package list changes)
arch_unpack_debs() {
  local dest=$1; shift
  local want="$*"
  [ -f "$dest/.complete" ] && [ "$(head -n1 "$dest/.complete")" = "packages: $want" ] && return 0
  local apt=$ARCH_DIR/apt lockfd
  mkdir -p "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
  # one apt state per arch: two builds (the prebuilds, an arch lane) take turns
  exec {lockfd}>"$apt/.lock"
  flock "$lockfd"
  if [ -f "$dest/.complete" ] && [ "$(head -n1 "$dest/.complete")" = "packages: $want" ]; then exec {lockfd}>&-; return 0; fi
  : >"$apt/state/status"
  # the system's apt sources (deb822 .sources and sources.list), the foreign arch as the only one
  local opts=(-o "Dir::State=$apt/state" -o "Dir::State::status=$apt/state/status" -o "Dir::Cache=$apt/cache"
    -o "APT::Architecture=$ARCH_DEB" -o "APT::Architectures::=$ARCH_DEB" -o "APT::Sandbox::User=root"
    -o "Debug::NoLocking=1" -o "Acquire::Languages=none")
  apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
    arch_die "apt-get update for $ARCH_DEB failed (log: $apt/update.log)"
  local p v
  rm -f "$apt/debs"/*.deb
  for p in "$@"; do
    # the candidate is what the archive serves for this arch today (not necessarily the host's version)
    v=$(apt-cache "${opts[@]}" policy "$p:$ARCH_DEB" 2>/dev/null | awk '/Candidate:/ {print $2}')
    [ -n "$v" ] && [ "$v" != "(none)" ] || arch_die "Debian's archive serves no $p for $ARCH_DEB (sources: /etc/apt)"
    (cd "$apt/debs" && apt-get "${opts[@]}" download "$p:$ARCH_DEB=$v" >>"$apt/download.log" 2>&1) ||
      arch_die "cannot download $p:$ARCH_DEB=$v from Debian's archive (log: $apt/download.log)"
  done
  rm -rf "$dest"
  mkdir -p "$dest"
  for p in "$apt/debs"/*.deb; do dpkg-deb -x "$p" "$dest"; done
  { echo "packages: $want"; (cd "$apt/debs" && ls); } >"$dest/.complete"
  exec {lockfd}>&-
}

# arch_binfmt ARCH: qemu-user for ARCH's ELF files via binfmt_misc, so a process can spawn the foreign
# node (vitest's workers, the launcher's child). Uses Debian's qemu-user-static registration string.
arch_binfmt() {
  arch_vars "$1" || return
  [ -n "$ARCH_QEMU" ] || return 0
  arch_apt_install qemu-user-static
  local bm=/proc/sys/fs/binfmt_misc
  [ -e "$bm/register" ] || mount -t binfmt_misc binfmt_misc "$bm" 2>/dev/null ||
    arch_die "binfmt_misc is not mounted and cannot be (needed to run $ARCH_NODE_ARCH child processes)"
  [ -e "$bm/qemu-$ARCH_QEMU" ] && return 0
  local conf=/usr/lib/binfmt.d/qemu-$ARCH_QEMU.conf
  [ -f "$conf" ] || arch_die "qemu-user-static has no $conf"
  # the file holds \x escapes, which the kernel's register parser decodes itself
  cat "$conf" >"$bm/register" 2>/dev/null || [ -e "$bm/qemu-$ARCH_QEMU" ] ||
    arch_die "cannot register qemu-$ARCH_QEMU with binfmt_misc (needs root)"
}

# arch_tooling ARCH: the native parts of the repo's dev tooling for ARCH (rolldown's binding for vitest,
# esbuild, lightningcss: every node_modules package named *linux-x64*), same versions, unpacked under
# $ARCH_DIR/tooling-<hash>/node_modules -> ARCH_TOOLING (use as NODE_PATH). One a registry lacks for ARCH
# is left out with a note (lightningcss has no s390x build; vitest loads it only for CSS).
arch_tooling() {
  arch_vars "$1" || return
  local root=${ARCH_REPO:-$PWD} list hash
  list=$(cd "$root/node_modules" && for d in *linux-x64* @*/*linux-x64*; do
    [ -f "$d/package.json" ] && echo "$d@$(node -p "require('./$d/package.json').version")"; done | sort)
  hash=$(echo "$list" | sha256sum | cut -c1-12)
  ARCH_TOOLING=$ARCH_DIR/tooling-$hash/node_modules
  [ -f "$ARCH_TOOLING/.complete" ] && return 0
  rm -rf "$ARCH_DIR/tooling-$hash"
  mkdir -p "$ARCH_TOOLING"
  local spec name ver foreign tmp
  for spec in $list; do
    name=${spec%@*} ver=${spec##*@}
    foreign=${name/linux-x64/linux-$ARCH_NODE_ARCH}
    tmp=$(mktemp -d)
    if (cd "$tmp" && npm pack "$foreign@$ver" --silent >/dev/null 2>&1); then
      mkdir -p "$ARCH_TOOLING/$foreign"
      tar -xzf "$tmp"/*.tgz -C "$ARCH_TOOLING/$foreign" --strip-components=1
    else
      echo "arch: note: the npm registry has no $foreign@$ver (left out)" >&2
    fi
    rm -rf "$tmp"
  done
  echo "$list" >"$ARCH_TOOLING/.complete"
}

# arch_setup ARCH: all of the above
arch_setup() {
  mkdir -p "$ARCH_CACHE_ROOT"
  arch_node "$1"
  arch_sysroot "$1"
  arch_binfmt "$1"
  arch_tooling "$1"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -eq 1 ] || { echo "usage: bash scripts/arch-lib.sh arm64|s390x" >&2; exit 2; }
  arch_setup "$1"
  printf 'ARCH_NODE=%q\nARCH_NODE_VERSION=%q\nARCH_SYSROOT=%q\nARCH_TRIPLE=%q\nARCH_TOOLING=%q\n' "$ARCH_NODE" "$ARCH_NODE_VERSION" "$ARCH_SYSROOT" "$ARCH_TRIPLE" "$ARCH_TOOLING"
fi
