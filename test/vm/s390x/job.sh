# Guest job of the s390x lane: the s390x real-kernel suite (vitest.kernel.config.mts suite "s390x") on
# the big-endian guest, with the boot and suite times in the console.
. test/vm/jobs/vitest-lib.sh
export SMC_RUN_EXPECT=smcd SMC_RUN_KERNEL_SUITE=s390x
echo "s390x guest: $(uname -m) $(uname -r), node $(node -v), job at uptime $(cut -d' ' -f1 /proc/uptime) s"
t0=$(date +%s)
rc=0
# shellcheck disable=SC2086
run_vitest s390x ${SMC_RUN_VITEST_ARGS:-} || rc=$?
echo "s390x guest: suite took $(( $(date +%s) - t0 )) s (rc=$rc)"
exit $rc
