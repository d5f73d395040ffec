#!/bin/sh
# Builds the LD_PRELOAD library (native/preload/smc-preload.c) for the launcher's non-Node programs.
# usage: sh native/preload/build.sh OUT [CC]    (npm run build: build/Release/smc-preload.so, host gcc;
#        scripts/build-prebuilds.sh: prebuilds/linux-<arch>/smc-preload.so with Debian's cross gcc)
# Loadable on glibc 2.28+: the source pins dlsym to its pre-2.34 version, and libdl.so.2 is a needed
# library so that version resolves on glibc before 2.34 (where dlsym lives in libdl).
set -eu
cd "$(dirname "$0")/../.."
out=$1 cc=${2:-${CC:-gcc}}
# up to date: nothing to do (npm run build runs this every time)
[ -z "${2:-}" ] && [ "$out" -nt native/preload/smc-preload.c ] && [ "$out" -nt native/preload/build.sh ] && exit 0
mkdir -p "$(dirname "$out")"
$cc -std=gnu11 -O2 -fPIC -shared -fvisibility=hidden -U_FORTIFY_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
  -o "$out.tmp" native/preload/smc-preload.c -Wl,--no-as-needed -l:libdl.so.2 -Wl,-z,relro,-z,now
mv "$out.tmp" "$out"
