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
  # waits for dpkg's lock when another apt-get holds it (instead of failing the step)
  local lock=(-o DPkg::Lock::Timeout=600)
  if [ ! -e "$CACHE_ROOT/.apt-updated" ] || ! apt-get install -y --no-install-recommends --dry-run "${need[@]}" >/dev/null 2>&1; then
    apt-get "${lock[@]}" update -qq && mkdir -p "$CACHE_ROOT" && touch "$CACHE_ROOT/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# The lanes, in the order `--target all` runs them, as name:reports (how many vitest runs their guests
# make). A lane on Debian's stock kernel comes first, so that the background kernel builds .ci/run starts
# (test/vm/kernels.sh) have time to finish before a lane boots their kernels; then the longest first.
LANES=(smcr-6.12:2 smcd-burst:1 smcd-6.12:4 smcd-newest:1 smcr-6.1:1 s390x:1)
# Lanes that run with no other lane beside them under run.sh --jobs: their connection bursts are
# load-sensitive by nature (measured: beside other lanes at equal priority, a 2,000-connection SMC-R burst
# ran past the kernel's handshake wait and fell back, and 142 of an SMC-D burst from C got ECONNRESET).
ALONE=(smcr-6.12 smcd-burst)
# lane_timeout SECONDS: a lane's qemu timeout, scaled by how many lanes share the machine with it
# (run.sh exports SMC_RUN_LANE_JOBS)
lane_timeout() { echo $(( $1 * ${SMC_RUN_LANE_JOBS:-1} )); }
declare -A ALIAS=([smcd]=smcd-6.12 [smcr]=smcr-6.12)
# build-kernel.sh's arguments for the lanes that boot a kernel built here (the others boot Debian's)
declare -A LANE_KERNEL=([smcd-6.12]="--arch x86_64" [smcd-newest]="--series newest --suite trixie-backports --fragment config-7.x.fragment" [s390x]="--arch s390x")
# the Debian packages those builds need (installed in the foreground: the background never runs the
# system's apt-get, which a foreground step may be running)
KERNEL_BUILD_TOOLS=(gcc gcc-s390x-linux-gnu make bc bison flex libelf-dev libssl-dev xz-utils dwarves)

# debian_apt RELEASE ARGS... : apt-get against a private state for that Debian release (bookworm, trixie,
# ...; system sources and state untouched), under $CACHE_ROOT/apt-RELEASE.
debian_apt() {
  local rel=$1; shift
  local st=$CACHE_ROOT/apt-$rel
  mkdir -p "$st/lists/partial"
  [ -e "$st/sources.list" ] || echo "deb $MIRROR $rel main" > "$st/sources.list"
  local o=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$st/lists"
           -o Dir::Cache::archives="$st/archives" -o APT::Sandbox::User=root)
  # one apt-get at a time per state: a lane and the background kernel builds (.ci/run) may share a release
  (
    flock 8
    if ! ls "$st/lists/"*"$rel"*Packages* >/dev/null 2>&1 || [ -n "$(find "$st/lists" -maxdepth 1 -name '*Packages*' -mtime +7)" ]; then
      apt-get "${o[@]}" update -qq >/dev/null
    fi
    apt-get "${o[@]}" "$@"
  ) 8>"$st/smc-run.lock"
}
# trixie_apt ARGS... : debian_apt trixie ARGS...
trixie_apt() { debian_apt trixie "$@"; }

# stage_job JOB DEST: copy a guest job into the run directory with the host's SMC_RUN_VITEST_ARGS (a subset
# of files or a -t filter) set at its top: the guest's init starts jobs with a fresh environment
stage_job() {
  { [ -z "${SMC_RUN_VITEST_ARGS:-}" ] || printf 'export SMC_RUN_VITEST_ARGS=%q\n' "$SMC_RUN_VITEST_ARGS"
    cat "$1"; } > "$2"
}

# accel_args: qemu's accelerator options: KVM where it is real (not PVM), else multi-threaded TCG.
# SMC_RUN_ACCEL=icount (benchmarks): single-threaded TCG with instruction counting, one virtual ns per
# guest instruction and no real sleeping, so guest clocks measure executed instructions, not host load.
accel_args() {
  if [ "${SMC_RUN_ACCEL:-auto}" = icount ]; then
    echo "-accel tcg,thread=single,tb-size=256 -cpu max -icount shift=0,sleep=off"
  elif [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && [ "${SMC_RUN_ACCEL:-auto}" != tcg ]; then
    echo "-enable-kvm -cpu host,-arch-capabilities"
  else
    echo "-accel tcg,thread=multi,tb-size=256 -cpu max"
  fi
}
