# shellcheck shell=bash
# SMC-R autocorking benchmark, guest b (the reader / echo side, 10.99.0.2): the benchmark server, until guest
# a's job ends (a-done), then autocorking_size is back to what it was (the server restores it).
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
pair_step "autocork bench: serve"
node bench/smcr/autocork.cjs serve --port 7300 --ready-file "$SMC_RUN_VM_RUN/b-ready" --stop-file "$SMC_RUN_VM_RUN/a-done"
pair_step "autocorking_size after: $(node bin/smc-run sysctl get autocorking_size)"
