# SMC core suite on Debian 12's 6.1 over SoftRoCE, guest a (lane smcr-6.1): vitest (suite smcr-6.1:
# test/kernel/k61 and test/kernel/common) drives the peer agent in guest b (suite-b.sh). One vitest run.
set -uo pipefail
. test/vm/smcr/jobs/pair-lib.sh
. test/vm/jobs/vitest-lib.sh
trap 'pair_mark a-done' EXIT
pair_wait b-ready 300 || exit 1
export SMC_RUN_EXPECT=smcr SMC_RUN_KERNEL_SUITE=smcr-6.1
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-}
