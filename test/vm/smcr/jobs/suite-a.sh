# SMC-R suite, guest a: vitest (test/kernel/smcr) drives the peer agent in guest b; then the tests that
# end guest b (test/kernel/smcr-last: the peer's power cut) in a second run, whatever the first gave.
set -uo pipefail
. test/vm/smcr/jobs/pair-lib.sh
. test/vm/jobs/vitest-lib.sh
trap 'pair_mark a-done' EXIT
pair_wait b-ready 300 || exit 1
export SMC_RUN_EXPECT=smcr
rc=0
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-} || rc=$?
if [ -z "${SMC_RUN_VITEST_ARGS:-}" ] && [ "${SMC_RUN_SUITE:-full}" = full ]; then
  SMC_RUN_SUITE_PHASE=last run_vitest last || rc=$((rc ? rc : $?))
fi
exit $rc
