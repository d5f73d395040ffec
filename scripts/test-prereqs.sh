#!/bin/sh
# npm test's prerequisites: the tools its suites run (the addon's build: python3, make, g++; the LD_PRELOAD
# library's test programs: gcc; the BPF switch: clang, libbpf-dev; the alert rules' tests: promtool from
# Debian's prometheus; the namespace tests: ip, unshare; the packaging test: objdump, tar).
# All there: silent. Missing, as root on Debian or Ubuntu: installs them once, quietly, with one line on
# stderr (as .ci/run does). Missing elsewhere: one line naming the packages and the command, exit 1, and
# npm test runs nothing (no half-run suite, no test skipped for a missing tool).
# usage: sh scripts/test-prereqs.sh [--check]   (--check: never install, only say what is missing)
set -eu
cd "$(dirname "$0")/.."
missing=
need() { # need PACKAGE TEST...: PACKAGE is missing unless every TEST (a command, or a path) is there
  pkg=$1; shift
  for t in "$@"; do
    case $t in
      /*) [ -e "$t" ] || { missing="$missing $pkg"; return 0; } ;;
      *) command -v "$t" >/dev/null 2>&1 || { missing="$missing $pkg"; return 0; } ;;
    esac
  done
}
triple=$(gcc -dumpmachine 2>/dev/null || echo "$(uname -m)-linux-gnu")
need python3 python3
need make make
need g++ g++
need gcc gcc
need clang clang
need libbpf-dev "/usr/include/bpf/libbpf.h" "/usr/lib/$triple/libbpf.a"
need libelf-dev "/usr/lib/$triple/libelf.a"
need zlib1g-dev "/usr/lib/$triple/libz.a"
need prometheus promtool
need iproute2 ip
need util-linux unshare
need binutils objdump
need tar tar
[ -n "$missing" ] || exit 0
missing=${missing# }
if [ "${1:-}" != --check ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
  echo "smc-run: npm test: installing its prerequisites once: $missing" >&2
  # test/vm/lib.sh's apt_need: waits for dpkg's lock, updates the lists only when they are stale
  # shellcheck disable=SC2086
  bash -c '. test/vm/lib.sh && apt_need "$@"' apt_need $missing || {
    echo "smc-run: npm test: could not install $missing (apt-get failed; run: apt-get install $missing)" >&2
    exit 1
  }
  exit 0
fi
echo "smc-run: npm test needs $missing, not installed (Debian/Ubuntu: sudo apt-get install $missing)" >&2
exit 1
