# SMC-R suite, guest a: vitest (test/kernel/smcr) drives the peer agent in guest b.
set -uo pipefail
. test/vm/smcr/jobs/pair-lib.sh
trap 'pair_mark a-done' EXIT
pair_wait b-ready 300 || exit 1
export SMC_RUN_EXPECT=smcr CI=1 FORCE_COLOR=0
node node_modules/vitest/vitest.mjs run --config vitest.kernel.config.mts ${SMC_RUN_VITEST_ARGS:-}
