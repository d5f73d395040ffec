# Guest job of lane smcd-burst: the SMC-D connection bursts (Node and C, vitest.kernel.config.mts suite
# smcd-burst) on the 6.12 loopback-ism kernel, expecting SMC-D on both ends.
. test/vm/jobs/vitest-lib.sh
export SMC_RUN_EXPECT=smcd SMC_RUN_KERNEL_SUITE=smcd-burst
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-}
