# Guest job of lane smcd-6.12: the full SMC-D suite, then the packed npm tarball (not the repo) installed
# into an empty project and run on SMC-D (tarball-smcd.sh; the lane script prepared it on the host).
. test/vm/jobs/vitest-lib.sh
export SMC_RUN_EXPECT=smcd
rc=0
# shellcheck disable=SC2086
run_vitest main ${SMC_RUN_VITEST_ARGS:-} || rc=$?
bash test/vm/jobs/tarball-smcd.sh || rc=$((rc ? rc : $?))
exit $rc
