# Guest job: the real-kernel vitest suite for this guest (SMC_RUN_GUEST_NAME picks the files).
# vitest writes no cache into the repo (cacheDir is in the guest's tmpfs, see vitest.kernel.config.mts).
export SMC_RUN_EXPECT=${SMC_RUN_EXPECT:-smcd} CI=1 FORCE_COLOR=0
node node_modules/vitest/vitest.mjs run --config vitest.kernel.config.mts ${SMC_RUN_VITEST_ARGS:-}
