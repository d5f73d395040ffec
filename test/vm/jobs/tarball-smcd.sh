#!/usr/bin/env bash
# The npm tarball, not the repo, on SMC-D (#18): installs the packed smc-run into an empty project inside
# the SMC-D guest (offline, --ignore-scripts: guests have no registry) and runs examples/echo-smc.js from
# that project under its own `smc-run`, expecting SMC-D on both ends and the addon from prebuilds/.
#
# usage (two steps; the guest has no network, so the host packs and fills an npm cache first):
#   host:   bash test/vm/jobs/tarball-smcd.sh --prepare RUN_DIR   # RUN_DIR/tarball/{smc-run-*.tgz,npm-cache}
#   guest:  bash test/vm/jobs/tarball-smcd.sh                     # in a guest job (SMC_RUN_VM_RUN=RUN_DIR)
# or as a whole guest job:  bash test/vm/smcd/boot.sh test/vm/jobs/tarball-smcd.sh RUN_DIR  (after --prepare)
# The guest step writes RUN_DIR/results/vitest-tarball.json (1 test, vitest's JSON report format) so that
# test/vm/lane-report.cjs counts it with the lane's suite, and exits non-zero on failure.
set -euo pipefail
if [ "${1:-}" = --prepare ]; then
  run=${2:?usage: tarball-smcd.sh --prepare RUN_DIR}
  repo=$(cd "$(dirname "$0")/../../.." && pwd)
  out=$run/tarball
  rm -rf "$out"
  mkdir -p "$out/warm"
  # packed as built: dist/ and the prebuilds come from the host's build (test/vm/run.sh builds the
  # prebuilds before any lane starts), and --ignore-scripts keeps prepack from rewriting dist/ while other
  # guests read it; the registry fills a cache the guest installs from offline
  for f in dist/cli.mjs dist/preload.js prebuilds/linux-x64/smc_run.glibc.node prebuilds/linux-arm64/smc_run.glibc.node prebuilds/linux-s390x/smc_run.glibc.node; do
    [ -s "$repo/$f" ] || { echo "tarball-smcd: $f is not built (npm run build:ts && npm run build:prebuilds)" >&2; exit 1; }
  done
  (cd "$repo" && npm pack --ignore-scripts --pack-destination "$out" --silent >/dev/null)
  tgz=$(ls "$out"/smc-run-*.tgz)
  echo '{"name":"warm","version":"1.0.0","private":true}' >"$out/warm/package.json"
  (cd "$out/warm" && npm install --no-save --ignore-scripts --no-audit --no-fund --cache "$out/npm-cache" "$tgz" >/dev/null)
  rm -rf "$out/warm"
  echo "tarball-smcd: prepared $(basename "$tgz") ($(stat -c %s "$tgz") bytes) and an npm cache in $out"
  exit 0
fi

: "${SMC_RUN_VM_RUN:?not in a guest (see usage)}"
src=$SMC_RUN_VM_RUN/tarball
results=$SMC_RUN_VM_RUN/results
mkdir -p "$results"
uname -r >"$results/kernel"
start=$(date +%s%3N)
status=failed msg=
check() {
  app=$(mktemp -d)
  tgz=$(ls "$src"/smc-run-*.tgz 2>/dev/null) || { msg="no tarball in $src (run --prepare on the host)"; return 1; }
  echo '{"name":"app","version":"1.0.0","private":true}' >"$app/package.json"
  cp examples/echo-smc.js "$app/"
  (cd "$app" && HOME=$app npm install --offline --no-save --ignore-scripts --no-audit --no-fund \
    --cache "$src/npm-cache" "$tgz" >"$app/install.log" 2>&1) || { msg="offline npm install failed: $(tail -3 "$app/install.log" | tr '\n' ' ')"; return 1; }
  [ ! -e "$app/node_modules/smc-run/build" ] || { msg="the installed package has a build/ directory"; return 1; }
  local out
  out=$(cd "$app" && HOME=$app ./node_modules/.bin/smc-run node echo-smc.js 2>&1) || { msg="echo-smc.js failed: $out"; return 1; }
  echo "$out"
  printf '%s\n' "$out" | grep -qx 'server: SMC-D' && printf '%s\n' "$out" | grep -qx 'client: SMC-D' &&
    printf '%s\n' "$out" | grep -qx 'echo over SMC-D: hello' || { msg="expected SMC-D on both ends: $out"; return 1; }
  status=passed
}
check || true
dur=$(( $(date +%s%3N) - start ))
[ "$status" = passed ] || echo "tarball-smcd: $msg" >&2
node -e '
const [file, status, dur, msg] = process.argv.slice(1);
const t = { title: "the installed npm tarball runs examples/echo-smc.js on SMC-D", fullName: "tarball-smcd", status, duration: Number(dur), failureMessages: msg ? [msg] : [] };
const ok = status === "passed";
require("fs").writeFileSync(file, JSON.stringify({ numTotalTests: 1, numPassedTests: ok ? 1 : 0, numFailedTests: ok ? 0 : 1, numPendingTests: 0, numTodoTests: 0, success: ok,
  testResults: [{ name: "test/vm/jobs/tarball-smcd.sh", status: ok ? "passed" : "failed", assertionResults: [t] }] }));
' "$results/vitest-tarball.json" "$status" "$dur" "$msg"
[ "$status" = passed ]
