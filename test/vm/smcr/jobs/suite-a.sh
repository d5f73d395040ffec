# SMC-R suite, guest a: vitest (test/kernel/smcr) drives the peer agent in guest b; then the tests that
# end guest b (test/kernel/smcr-last: the peer's power cut) in a second run, whatever the first gave.
set -uo pipefail
. test/vm/smcr/jobs/pair-lib.sh
trap 'pair_mark a-done' EXIT
pair_wait b-ready 300 || exit 1
export SMC_RUN_EXPECT=smcr CI=1 FORCE_COLOR=0
rc=0
node node_modules/vitest/vitest.mjs run --config vitest.kernel.config.mts ${SMC_RUN_VITEST_ARGS:-} || rc=$?
if [ -z "${SMC_RUN_VITEST_ARGS:-}" ]; then
  SMC_RUN_SUITE_PHASE=last node node_modules/vitest/vitest.mjs run --config vitest.kernel.config.mts || rc=$((rc ? rc : $?))
fi
exit $rc
