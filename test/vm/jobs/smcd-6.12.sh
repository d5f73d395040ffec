# Guest job of lane smcd-6.12: the full SMC-D suite, then the packed npm tarball (not the repo) installed
# into an empty project and run on SMC-D (tarball-smcd.sh; the lane script prepared it on the host), then
# the README's host suite as a user with an SMC kernel runs it (`npm test`'s vitest run, no SMC_RUN_EXPECT).
. test/vm/jobs/vitest-lib.sh
rc=0
# shellcheck disable=SC2086
SMC_RUN_EXPECT=smcd run_vitest main ${SMC_RUN_VITEST_ARGS:-} || rc=$?
bash test/vm/jobs/tarball-smcd.sh || rc=$((rc ? rc : $?))
# Left out: packaging.test.ts, which installs the tarball from the npm registry (guests have none; the
# tarball step above installs it from a cache the host filled, and runs it on SMC-D), and the three files
# the SMC-D suite above ran already in this guest, with SMC required (paths, sockopt, promises). Under
# emulation a test gets 300 s (each smc-run start takes seconds) and the worker fd test makes 200 worker
# starts.
if [ -z "${SMC_RUN_VITEST_ARGS:-}" ]; then
  SMC_RUN_TEST_WORKER_STARTS=200 run_vitest_config vitest.config.mts host \
    --exclude test/integration/packaging.test.ts --exclude test/integration/paths.test.ts \
    --exclude test/integration/sockopt.test.ts --exclude test/integration/promises.test.ts \
    --testTimeout=300000 || rc=$((rc ? rc : $?))
fi
exit $rc
