# Guest job of lane smcd-newest: the SMC-D suite for the newest kernel (vitest.kernel.config.mts suite
# smcd-newest), expecting SMC-D on both ends.
. test/vm/jobs/vitest-lib.sh
export SMC_RUN_EXPECT=smcd SMC_RUN_KERNEL_SUITE=smcd-newest
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-}
