# shellcheck shell=bash
# SMC-R autocorking benchmark, guest a (the writer side, 10.99.0.1): waits for b's server, runs the matrix
# with bench/smcr/autocork.cjs, writes the JSON into the repo (shared read-write with the host).
# Run by bench/smcr/pair.sh through test/vm/smcr/boot-pair.sh, which passes SMCR_BENCH_OUT and
# SMCR_BENCH_ARGS in a small wrapper job (the guests' environment does not come from the host).
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
trap 'pair_mark a-done' EXIT
OUT=${SMCR_BENCH_OUT:-bench/results/smcr-autocork.json}
pair_step "autocorking_size before: $(node bin/smc-run sysctl get autocorking_size)"
pair_wait b-ready 300
pair_step "autocork bench: run --peer $SMC_RUN_PEER_IP ${SMCR_BENCH_ARGS:-}"
# shellcheck disable=SC2086 # the extra arguments are meant to split
node bench/smcr/autocork.cjs run --peer "$SMC_RUN_PEER_IP" --port 7300 --out "$OUT" ${SMCR_BENCH_ARGS:-}
pair_step "autocorking_size after: $(node bin/smc-run sysctl get autocorking_size)"
