#!/usr/bin/env bash
# Part of `npm run bench:smoke` (CI, host, seconds): compiles the C reference and runs the whole SMC-D
# benchmark pipeline once with tiny windows in test mode (plain inet sockets, checked to be tcp), then
# the report generator on that output (written under build/bench/, never over the committed results).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/bench
cc -O2 -Wall -Wextra -Werror -o build/bench/smc-bench bench/c/smc-bench.c
node bench/smcd/run.cjs --smoke
node bench/smcd/report.cjs --smoke > /dev/null
echo "bench:smoke SMC-D pipeline ok (build/bench/smcd-smoke*.json, build/bench/smcd-smoke.svg)"
