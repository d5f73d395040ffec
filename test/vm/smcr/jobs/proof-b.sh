# shellcheck shell=bash
# SMC-R proof, guest b (server side); guest a runs proof-a.sh; ../boot-pair.sh runs the pair.
# The echo server runs under the launcher: it creates b-ready once it listens, serves a's one connection
# and exits 0 only if that connection was SMC-R (or 1 as soon as a's guest has finished without
# connecting). If it failed, this job ends at once, so rc-b tells a to stop waiting; otherwise b stays up
# until a-done, so the link group lives as long as a's job looks at it.
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
PORT=${SMC_RUN_PROOF_PORT:-7070}
pair_step "echo server under smc-run on 0.0.0.0:$PORT"
rc=0
node bin/smc-run node test/vm/smcr/jobs/proof-echo.cjs server "$PORT" "$SMC_RUN_VM_RUN/b-ready" "$SMC_RUN_VM_RUN/rc-$PAIR_PEER" || rc=1
if [ $rc = 0 ]; then pair_wait a-done 120 || rc=1; fi
pair_step "server side done, rc=$rc"
exit $rc
