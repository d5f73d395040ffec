# Shared helpers for the real-kernel harness (sourced, not run).
# Everything the harness downloads or builds lives in the user cache dir.
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/smc-run
# debian_mirror: the Debian archive this machine's apt already uses (the first URI of a non-security
# source in /etc/apt/sources.list.d/*.sources or a `deb` line of sources.list / *.list), so the harness
# fetches from wherever the machine is set up to (a local mirror, a proxy); SMC_RUN_DEBIAN_MIRROR overrides.
debian_mirror() {
  if [ -n "${SMC_RUN_DEBIAN_MIRROR:-}" ]; then echo "${SMC_RUN_DEBIAN_MIRROR%/}"; return; fi
  local f u
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    u=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) print $i }' "$f" | grep -v -e '-security' -e '^cdrom:' | head -n1)
    [ -n "$u" ] && { echo "${u%/}"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    u=$(sed -E 's/\[[^]]*\]//' "$f" | awk '$1=="deb" { print $2 }' | grep -v -e '-security' -e '^cdrom:' | head -n1)
    [ -n "$u" ] && { echo "${u%/}"; return; }
  done
  return 1
}
MIRROR=$(debian_mirror) || { echo "[smc-run vm] error: no Debian archive in the apt configuration (set SMC_RUN_DEBIAN_MIRROR)" >&2; exit 1; }
log() { echo "[smc-run vm $(date +%T)] $*" >&2; }
die() { echo "[smc-run vm] error: $*" >&2; exit 1; }

# apt_need PKG... : install Debian packages that are missing (CI machines may be fresh).
apt_need() {
  local need=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  ((${#need[@]})) || return 0
  log "apt-get install ${need[*]}"
  if [ ! -e "$CACHE_ROOT/.apt-updated" ] || ! apt-get install -y --no-install-recommends --dry-run "${need[@]}" >/dev/null 2>&1; then
    apt-get update -qq && mkdir -p "$CACHE_ROOT" && touch "$CACHE_ROOT/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# debian_apt RELEASE ARGS... : apt-get against a private state for that Debian release (bookworm, trixie,
# ...; system sources and state untouched), under $CACHE_ROOT/apt-RELEASE.
debian_apt() {
  local rel=$1; shift
  local st=$CACHE_ROOT/apt-$rel
  mkdir -p "$st/lists/partial"
  [ -e "$st/sources.list" ] || echo "deb $MIRROR $rel main" > "$st/sources.list"
  local o=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$st/lists"
           -o Dir::Cache::archives="$st/archives" -o APT::Sandbox::User=root)
  if ! ls "$st/lists/"*"$rel"*Packages* >/dev/null 2>&1 || [ -n "$(find "$st/lists" -maxdepth 1 -name '*Packages*' -mtime +7)" ]; then
    apt-get "${o[@]}" update -qq >/dev/null
  fi
  apt-get "${o[@]}" "$@"
}
# trixie_apt ARGS... : debian_apt trixie ARGS...
trixie_apt() { debian_apt trixie "$@"; }

# can_run_qemu: qemu can run here (TCG always can once installed).
accel_args() {
  if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && [ "${SMC_RUN_ACCEL:-auto}" != tcg ]; then
    echo "-enable-kvm -cpu host,-arch-capabilities"
  else
    echo "-accel tcg,thread=multi,tb-size=256 -cpu max"
  fi
}
