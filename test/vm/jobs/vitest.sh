# Guest job: the real-kernel vitest suite for this guest (SMC_RUN_GUEST_NAME picks the files).
# vitest writes no cache into the repo (cacheDir is in the guest's tmpfs, see vitest.kernel.config.mts).
. test/vm/jobs/vitest-lib.sh
export SMC_RUN_EXPECT=${SMC_RUN_EXPECT:-smcd}
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-}
