# Guest job of lane smcd-6.12: the full SMC-D suite, then the packed npm tarball (not the repo) installed
# into an empty project and run on SMC-D (tarball-smcd.sh; the lane script prepared it on the host), then
# the kernel-dependent part of the README's host suite as a user with an SMC kernel runs it (no
# SMC_RUN_EXPECT), and last the hook's SMC-D suites under Node 26 (the newest line the hook supports).
. test/vm/jobs/vitest-lib.sh
rc=0
# The files where the hook meets Node's internals over real SMC-D: every TCP path Node has (net, http(s),
# tls, http2, fetch, cluster, workers, happy eyeballs, listen(handle)), bulk data and fallbacks seen from
# both ends, socket behaviour, the example. Here they run once, under Node 26 (below), not under the
# machine's Node too: lane smcd-newest runs paths, connections and behaviour under that one.
node26_files="test/integration/paths.test.ts test/integration/example.test.ts test/kernel/smcd/connections.test.ts test/kernel/smcd/behaviour.test.ts"
main_args=${SMC_RUN_VITEST_ARGS:-}
if [ -z "$main_args" ]; then for f in $node26_files; do main_args="$main_args --exclude $f"; done; fi
# shellcheck disable=SC2086
SMC_RUN_EXPECT=smcd run_vitest main $main_args || rc=$?
bash test/vm/jobs/tarball-smcd.sh || rc=$((rc ? rc : $?))
# Of the README's host suite, the files whose expectations depend on whether the kernel has SMC: they
# import test/helpers/host-smc and pick that host's answer (doctor, the launcher's notice, stats, sysctl
# reads, metrics' smc_up). The rest of that suite runs in test mode (plain inet sockets) or on pure
# functions, and so gives the same result on any kernel; `npm test` runs it on the host in every CI run.
# promises.test.ts imports host-smc too, but the SMC-D suite above ran it already, with SMC required.
# Under emulation a test gets 300 s (each smc-run start takes seconds).
if [ -z "${SMC_RUN_VITEST_ARGS:-}" ]; then
  # (no process substitution: the guest has no /dev/fd; the paths have no spaces)
  depends=$(grep -l "helpers/host-smc" test/unit/*.test.ts test/integration/*.test.ts | grep -v "/promises.test.ts$" || true)
  [ -n "$depends" ] || { echo "smcd-6.12 job: no host-suite file imports helpers/host-smc" >&2; exit 1; }
  # shellcheck disable=SC2086
  run_vitest_config vitest.config.mts host $depends --testTimeout=300000 || rc=$((rc ? rc : $?))
fi
# Under Node 26 (the lane put its directory in the run dir): the hook's Node-internals files (above).
if [ -z "${SMC_RUN_VITEST_ARGS:-}" ]; then
  node26=$(cat "$SMC_RUN_VM_RUN/node26-bin" 2>/dev/null) || { echo "smcd-6.12 job: no node26-bin in the run dir" >&2; exit 1; }
  v=$("$node26/node" --version) && [[ $v == v26.* ]] || { echo "smcd-6.12 job: $node26/node is not Node 26 (${v:-does not run})" >&2; exit 1; }
  echo "smcd-6.12 job: the SMC-D hook suites under Node $v"
  # shellcheck disable=SC2086
  PATH="$node26:$PATH" SMC_RUN_EXPECT=smcd run_vitest node26 $node26_files || rc=$((rc ? rc : $?))
fi
exit $rc
