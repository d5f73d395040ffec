#!/usr/bin/env bash
# npm run bench:smcr — the SMC-R autocorking benchmark in the two test guests, then the report.
# usage: bench/smcr/pair.sh [--out FILE] [--no-report] [--timeout S] [-- ARGS for `autocork.cjs run`]
#   e.g. bench/smcr/pair.sh --out test-results/smcr-dev.json --no-report -- --runs 1 --secs 2
# Boots the guest pair (test/vm/smcr/boot-pair.sh): guest b serves, guest a runs the matrix and writes
# FILE (default bench/results/smcr-autocork.json) into the repo; then bench/smcr/report.cjs regenerates
# the section of bench/REPORT.md and bench/charts/smcr-autocork.svg from it. Build first (npm run build:ts).
# The full matrix (5 runs) takes about 15 minutes of guest time under TCG.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=bench/results/smcr-autocork.json REPORT=1 TIMEOUT=1800
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --no-report) REPORT=0; shift ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "pair.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$REPO"
# the guests take their environment from the kernel command line, not from here: the settings travel in
# a wrapper job (boot-pair.sh copies it into the run directory)
JOB_A=$(mktemp "${TMPDIR:-/tmp}/smcr-bench-a.XXXXXX")
trap 'rm -f "$JOB_A"' EXIT
# the guest writes FILE.new, moved into place only when the pair succeeded: a failed run neither keeps
# the previous results' place with a partial file nor passes an old file off as this run's
printf 'export SMCR_BENCH_OUT=%q SMCR_BENCH_ARGS=%q\n. bench/smcr/guest-a.sh\n' "$OUT.new" "$*" > "$JOB_A"
rm -f "$OUT.new"
bash test/vm/smcr/boot-pair.sh --timeout "$TIMEOUT" --grace 60 "$JOB_A" bench/smcr/guest-b.sh
[ -s "$OUT.new" ] || { echo "pair.sh: the guests wrote no $OUT.new" >&2; exit 1; }
mv "$OUT.new" "$OUT"
if [ $REPORT = 1 ]; then node bench/smcr/report.cjs --in "$OUT"; fi
